// `onepass download ORG/NAME[@REVISION]`: fetches what onepass needs of a Hub model into the
// huggingface_hub cache (so that a later `serve` or a container with HF_HUB_OFFLINE=1 finds it)
// and prints the snapshot folder on stdout, the only line there: `DIR=$(onepass download ID)`.
// Progress goes to stderr.
#include <cstdio>
#include <memory>
#include <string>

#include "apps/onepass/command.h"
#include "apps/onepass/model_reference.h"
#include "base/error.h"
#include "hub/reference.h"

namespace onepass::app {
namespace {

int download(const std::string& reference) {
  // A folder is not downloaded: say so rather than print it back.
  if (!hub::parse_hub_id(reference))
    throw Error(ErrorKind::kInvalidArgument,
                "'" + reference + "' is not a Hub id (org/name or org/name@revision)");
  const auto snapshot = resolve_model_reference(reference);
  std::printf("%s\n", snapshot.string().c_str());
  return 0;
}

CommandRegistration registration{Command{
    "download",
    "Download a Hub model (org/name[@revision]) into the Hugging Face cache and print its folder",
    [](CLI::App& sub) -> std::function<int()> {
      auto reference = std::make_shared<std::string>();
      sub.add_option("reference", *reference, "Hub id org/name[@revision]")->required();
      return [reference] { return download(*reference); };
    }}};

}  // namespace
}  // namespace onepass::app
