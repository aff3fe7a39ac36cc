// onepass: one binary, one subcommand per job (serve, run, tokenize, bench, check, info).
// This file is the CLI's error boundary: every expected failure becomes one line on stderr and
// exit code 2.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "apps/onepass/command.h"
#include "apps/onepass/openmp_spin.h"
#include "base/error.h"
#include "base/version.h"
#include "hub/environment.h"
#include "hub/resolve.h"
#include "model/architectures/gliner/gliner.h"

namespace onepass::app {

std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}

}  // namespace onepass::app

int main(int argc, char** argv) {
  using onepass::app::command_registry;
  // Before anything else runs: libgomp read its environment before main() (openmp_spin.h).
  if (argc > 1 && std::string_view(argv[1]) == "serve") onepass::app::reexec_with_serve_spin(argv);
  CLI::App app{"onepass: an inference server and benchmark for encoder transformer models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "onepass " + std::string(onepass::version()));

  std::map<CLI::App*, std::function<int()>> runners;
  for (const auto& command : command_registry()) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    runners[sub] = command.setup(*sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  // A GLiNER checkpoint that names its backbone only by Hub id (no encoder_config) reads the
  // backbone's config.json from the Hub cache, else downloads it (model/architectures/gliner).
  onepass::model::set_backbone_config_finder([](const std::string& model_name) {
    return onepass::hub::resolve_file(model_name, "config.json",
                                      onepass::hub::Environment::from_process());
  });
  try {
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
  } catch (const onepass::Error& e) {
    std::fprintf(stderr, "onepass: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onepass: unexpected error: %s\n", e.what());
    return 1;
  }
  return 2;
}
