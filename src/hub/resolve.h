// From a model reference to a local folder: THE entry point for everything that names a model
// (`serve --model`, `run`, `check`, `tokenize`, `info`, `download`, SageMaker's HF_MODEL_ID).
//
//   resolve_model("models/nli", env)           -> "models/nli"           (an existing folder)
//   resolve_model("acme/tiny-nli", env)        -> ".../snapshots/<commit>" (the Hub's main)
//   resolve_model("acme/tiny-nli@v1", env)     -> the snapshot of branch, tag or commit v1
//
// A path that exists is a folder and is returned unchanged. Anything else of the form
// `org/name[@revision]` is looked up on the Hub (env.endpoint) and downloaded into the
// huggingface_hub cache (env.cache_dir, see cache.h) with only the files onepass needs (see
// select_files); with env.offline the cache alone answers. The snapshot folder returned holds
// config.json, the tokenizer files and the weights, ready for model::load_encoder.
//
// Throws onepass::Error with a user-facing message: kNotFound (no such folder, repo, revision
// or, offline, file in the cache), kInvalidArgument (gated repo without token), kInvalidModel
// (no loadable weights, checksum mismatch), kUnavailable (network unreachable: the message says
// whether a cached snapshot exists and that HF_HUB_OFFLINE=1 uses it; disk full).
// Thread-safe; concurrent processes resolving the same model share the download (cache locks).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "hub/environment.h"
#include "hub/protocol.h"

namespace onepass::hub {

struct ResolveOptions {
  // Per-file progress: (file path in the repo, bytes so far, total bytes). Empty: quiet.
  std::function<void(const std::string&, std::uint64_t, std::uint64_t)> progress;
};

std::filesystem::path resolve_model(std::string_view reference, const Environment& env,
                                    const ResolveOptions& options = {});

// One file of a Hub repo (`reference`: org/name[@revision]): the snapshot's copy in the cache,
// else downloaded into it (not with env.offline). A GLiNER checkpoint without encoder_config
// reads its backbone's config.json this way (model::set_backbone_config_finder). Throws
// onepass::Error: kNotFound (not a Hub id, no such repo or file, offline and not cached),
// kUnavailable (network unreachable), kInvalidArgument (gated without token).
std::filesystem::path resolve_file(std::string_view reference, const std::string& path,
                                   const Environment& env);

// The default model name for a reference: the repo's name part for a Hub id, the folder's own
// name for a folder.
std::string default_model_name(std::string_view reference);

// The files of a repo's listing that onepass reads: configs, tokenizer files, sentence-
// transformers pooling files, and one weight format (model.safetensors or its index and shards,
// else pytorch_model.bin or its shards). Never the TF/Flax/ONNX/other duplicates. Shards named
// by an index are added by the resolver once the index is read. Throws kInvalidModel when the
// repo has no config.json (a GLiNER repo: no gliner_config.json either) or no loadable weights.
std::vector<std::string> select_files(const std::vector<std::string>& repo_files,
                                      const std::string& repo_id);

// The files of the sentence-transformers modules a repo's modules.json names beyond
// select_files' fixed list, among those the repo holds: each Dense module's config.json and
// weights (model.safetensors, else pytorch_model.bin) and a Pooling folder other than
// 1_Pooling. Empty for a modules.json that does not parse (the model's load then says why).
std::vector<std::string> module_files(const std::string& modules_json,
                                      const std::vector<std::string>& repo_files);

}  // namespace onepass::hub
