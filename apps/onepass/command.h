// Subcommand registry of the onepass binary. Each subcommand lives in its own cmd_<name>.cpp and
// registers itself with a static CommandRegistration, so adding one never touches main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace onepass::app {

// setup() adds the subcommand's options to `sub` and returns the function that runs it; that
// function returns the process exit code. Expected failures are thrown as onepass::Error and
// turned into a one-line message with exit code 2 by main().
struct Command {
  std::string name;
  std::string description;
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<Command>& command_registry();

struct CommandRegistration {
  explicit CommandRegistration(Command command) {
    command_registry().push_back(std::move(command));
  }
};

}  // namespace onepass::app
