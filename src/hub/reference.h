// What a user may name a model with: a local folder, or a Hugging Face Hub id `org/name` with an
// optional `@revision` (branch, tag or commit). Pure parsing, no file system or network.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace onepass::hub {

struct HubId {
  std::string repo_id;            // "org/name"
  std::string revision = "main";  // branch, tag or 40-hex commit
  bool revision_given = false;    // "@rev" was written
  std::string name() const;       // the part after '/', the default model name
};

// "org/name" or "org/name@rev" with org and name made of [A-Za-z0-9._-] (not starting with '.'
// or '-', no "--" or ".." as huggingface_hub's validate_repo_id requires), else nullopt.
std::optional<HubId> parse_hub_id(std::string_view text);

// True when `text` is a 40-character lowercase hex string, i.e. a commit rather than a branch.
bool is_commit_hash(std::string_view text);

}  // namespace onepass::hub
