#include "hub/resolve.h"

#include <openssl/evp.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "base/read_file.h"
#include "hub/cache.h"
#include "hub/reference.h"

namespace onepass::hub {
namespace fs = std::filesystem;

namespace {

// Files read when present (tokenizer and sentence-transformers files of every kind onepass
// loads).
const std::set<std::string> kOptionalFiles = {
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "sentencepiece.bpe.model",
    "spm.model",
    "tokenizer.model",
    "modules.json",
    "sentence_bert_config.json",
    // Older sentence-transformers releases named it after the model type
    // (runtime/sentence_transformers.cpp reads them all).
    "sentence_roberta_config.json",
    "sentence_distilbert_config.json",
    "sentence_camembert_config.json",
    "sentence_albert_config.json",
    "sentence_xlm-roberta_config.json",
    "sentence_xlnet_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
};

std::string sha256_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buffer.data(), in.gcount());
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

// The shard file names an index (model.safetensors.index.json) lists in its weight_map.
std::vector<std::string> shards_of(const fs::path& index) {
  const std::string text = read_file(index, kSettingsFileLimitBytes);
  std::set<std::string> shards;
  try {
    const auto json = nlohmann::json::parse(text);
    for (const auto& [name, file] : json.at("weight_map").items())
      shards.insert(file.get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::kInvalidModel, index.string() + " is not a weight index: " + e.what());
  }
  return {shards.begin(), shards.end()};
}

class Resolver {
 public:
  Resolver(HubId id, const Environment& env, const ResolveOptions& options)
      : id_(std::move(id)),
        env_(env),
        options_(options),
        cache_(env.cache_dir, id_.repo_id),
        client_(env) {}

  // `path` of the revision's snapshot: from the cache when it holds it, else downloaded (never
  // offline).
  fs::path one_file(const std::string& path) {
    if (const auto commit = cache_.commit_for(id_.revision);
        commit && cache_.has_file(*commit, path))
      return cache_.snapshot(*commit) / path;
    const std::string ref = id_.repo_id + "@" + id_.revision;
    if (env_.offline)
      throw Error(ErrorKind::kNotFound, "HF_HUB_OFFLINE is set and the cache " +
                                            env_.cache_dir.string() + " has no " + path + " of " +
                                            ref);
    const RepoInfo info = client_.repo_info(id_);
    if (std::find(info.files.begin(), info.files.end(), path) == info.files.end())
      throw Error(ErrorKind::kNotFound, "repository " + ref + " has no " + path);
    cache_.write_ref(id_.revision, info.commit);
    fetch(info.commit, path);
    return cache_.snapshot(info.commit) / path;
  }

  fs::path run() {
    if (env_.offline) return from_cache(/*offline=*/true, "");
    RepoInfo info;
    try {
      info = client_.repo_info(id_);
    } catch (const NetworkError& e) {
      return from_cache(false, e.what());
    }
    cache_.write_ref(id_.revision, info.commit);
    auto files = select_files(info.files, id_.repo_id);
    for (const auto& file : kOptionalFiles) {
      if (std::find(info.files.begin(), info.files.end(), file) == info.files.end())
        cache_.mark_missing(info.commit, file);
    }
    const std::set<std::string> listed(info.files.begin(), info.files.end());
    for (std::size_t i = 0; i < files.size(); ++i) {
      fetch(info.commit, files[i]);
      if (files[i].ends_with(".index.json")) {
        for (const auto& shard : shards_of(cache_.snapshot(info.commit) / files[i])) {
          if (!is_safe_repo_path(shard) || !listed.count(shard))
            throw Error(ErrorKind::kInvalidModel,
                        files[i] + " names shard '" + shard + "', which the repo does not hold");
          files.push_back(shard);
        }
      }
    }
    if (listed.count("gliner_config.json") && !listed.count("config.json"))
      fetch_gliner_backbone_config(cache_.snapshot(info.commit) / "gliner_config.json");
    if (listed.count("modules.json")) {
      const std::string modules =
          read_file(cache_.snapshot(info.commit) / "modules.json", kSettingsFileLimitBytes);
      for (const auto& file : module_files(modules, info.files)) fetch(info.commit, file);
    }
    return cache_.snapshot(info.commit);
  }

 private:
  // A GLiNER repo that names its backbone only by Hub id (model_name, no encoder_config): its
  // config.json comes down with it, so that the model also loads offline afterwards. Best
  // effort: when it cannot, the model's load says what is missing (model::load_gliner).
  void fetch_gliner_backbone_config(const fs::path& gliner_config) {
    const auto config = nlohmann::json::parse(read_file(gliner_config, kSettingsFileLimitBytes),
                                              nullptr, /*allow_exceptions=*/false);
    if (!config.is_object()) return;
    const auto encoder = config.find("encoder_config");
    const auto name = config.find("model_name");
    if ((encoder != config.end() && !encoder->is_null()) || name == config.end() ||
        !name->is_string())
      return;
    const std::string backbone = name->get<std::string>();
    std::error_code ec;
    if (fs::exists(fs::path(backbone), ec) || !parse_hub_id(backbone)) return;
    try {
      resolve_file(backbone, "config.json", env_);
    } catch (const Error&) {
      // Reported by the load, which looks for it again.
    }
  }

  void fetch(const std::string& commit, const std::string& path) {
    if (cache_.has_file(commit, path)) return;
    const FileMeta meta = client_.file_meta(id_.repo_id, commit, path);
    if (!meta.commit.empty() && meta.commit != commit) {
      throw Error(ErrorKind::kUnavailable, "the Hub answered for commit " + meta.commit +
                                               " while " + commit + " was asked for " + path);
    }
    const fs::path blob = cache_.blob(meta.etag);
    if (!fs::exists(blob)) {
      BlobLock lock(cache_.lock_file(meta.etag));
      if (!fs::exists(blob)) {  // another process may have written it while we waited
        const fs::path partial = cache_.incomplete(meta.etag);
        fs::create_directories(partial.parent_path());
        if (options_.progress) {
          // The download starts now (from a resumed prefix, if any): the rate counts from here,
          // not from the first chunk.
          std::error_code ec;
          const auto have = fs::exists(partial, ec) ? fs::file_size(partial, ec) : 0;
          options_.progress(path, ec ? 0 : have, meta.size);
        }
        client_.download(meta, partial.string(), [&](std::uint64_t have, std::uint64_t total) {
          if (options_.progress) options_.progress(path, have, total);
        });
        const auto got = fs::file_size(partial);
        // Without a size from the Hub no chunk could say "complete": say it once here.
        if (meta.size == 0 && options_.progress) options_.progress(path, got, got);
        if (meta.size > 0 && got != meta.size) {
          fs::remove(partial);
          throw Error(ErrorKind::kInvalidModel, "downloaded " + path + " has " +
                                                    std::to_string(got) + " bytes, the Hub said " +
                                                    std::to_string(meta.size));
        }
        if (meta.lfs && is_sha256(meta.etag)) {
          const std::string actual = sha256_file(partial);
          if (actual != meta.etag) {
            fs::remove(partial);
            throw Error(ErrorKind::kInvalidModel,
                        "checksum mismatch for " + id_.repo_id + "/" + path + ": sha256 " + actual +
                            ", the Hub says " + meta.etag +
                            "; the corrupted download was deleted, try again");
          }
        }
        fs::rename(partial, blob);
      }
    }
    cache_.link(commit, path, meta.etag);
  }

  static bool is_sha256(const std::string& s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
             return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
  }

  // The snapshot the cache holds for the revision. `network_error` empty: offline mode.
  fs::path from_cache(bool offline, const std::string& network_error) {
    const auto commit = cache_.commit_for(id_.revision);
    const std::string ref = id_.repo_id + "@" + id_.revision;
    bool complete = false;
    if (commit)
      complete =
          cache_.has_file(*commit, "config.json") || cache_.has_file(*commit, "gliner_config.json");
    if (offline) {
      if (!commit)
        throw Error(ErrorKind::kNotFound, "HF_HUB_OFFLINE is set and the cache " +
                                              env_.cache_dir.string() + " has no snapshot of " +
                                              ref + " (download it once without HF_HUB_OFFLINE)");
      if (!complete)
        throw Error(ErrorKind::kNotFound, "HF_HUB_OFFLINE is set and the cached snapshot " +
                                              cache_.snapshot(*commit).string() +
                                              " lacks config.json");
      return cache_.snapshot(*commit);
    }
    throw NetworkError(network_error + "; " +
                       (complete ? "a cached snapshot of " + ref + " exists at " +
                                       cache_.snapshot(*commit).string() +
                                       ": set HF_HUB_OFFLINE=1 to use it"
                                 : "the cache " + env_.cache_dir.string() + " has no snapshot of " +
                                       ref + " (HF_HUB_OFFLINE=1 serves only cached models)"));
  }

  HubId id_;
  const Environment& env_;
  const ResolveOptions& options_;
  RepoCache cache_;
  HubClient client_;
};

}  // namespace

std::vector<std::string> select_files(const std::vector<std::string>& repo_files,
                                      const std::string& repo_id) {
  const std::set<std::string> have(repo_files.begin(), repo_files.end());
  // A GLiNER repo has gliner_config.json, and a config.json only when it publishes its
  // backbone's (most name the backbone's repo in model_name instead: model::load_gliner).
  if (!have.count("config.json") && !have.count("gliner_config.json"))
    throw Error(ErrorKind::kInvalidModel,
                "repository '" + repo_id +
                    "' has no config.json (nor a GLiNER gliner_config.json): not a transformers "
                    "model");
  std::vector<std::string> out;
  for (const char* config : {"config.json", "gliner_config.json"})
    if (have.count(config)) out.push_back(config);
  for (const auto& file : kOptionalFiles) {
    if (have.count(file)) out.push_back(file);
  }
  if (have.count("model.safetensors")) {
    out.push_back("model.safetensors");
  } else if (have.count("model.safetensors.index.json")) {
    out.push_back("model.safetensors.index.json");
  } else if (have.count("pytorch_model.bin")) {
    out.push_back("pytorch_model.bin");
  } else if (have.count("pytorch_model.bin.index.json")) {
    out.push_back("pytorch_model.bin.index.json");
  } else {
    throw Error(ErrorKind::kInvalidModel,
                "repository '" + repo_id +
                    "' has no loadable weights: neither model.safetensors (or a sharded "
                    "model.safetensors.index.json) nor pytorch_model.bin");
  }
  return out;
}

std::vector<std::string> module_files(const std::string& modules_json,
                                      const std::vector<std::string>& repo_files) {
  const std::set<std::string> have(repo_files.begin(), repo_files.end());
  const auto modules = nlohmann::json::parse(modules_json, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> out;
  if (!modules.is_array()) return out;
  auto add = [&](const std::string& file) {
    if (!have.count(file) || !is_safe_repo_path(file)) return false;
    if (std::find(out.begin(), out.end(), file) == out.end()) out.push_back(file);
    return true;
  };
  for (const auto& module : modules) {
    if (!module.is_object()) continue;
    const auto type = module.find("type");
    const auto path = module.find("path");
    if (type == module.end() || !type->is_string() || path == module.end() || !path->is_string() ||
        path->get<std::string>().empty())
      continue;
    const std::string folder = path->get<std::string>();
    if (type->get<std::string>() == "sentence_transformers.models.Dense") {
      add(folder + "/config.json");
      if (!add(folder + "/model.safetensors")) add(folder + "/pytorch_model.bin");
    } else if (type->get<std::string>() == "sentence_transformers.models.Pooling") {
      add(folder + "/config.json");
    }
  }
  return out;
}

std::string default_model_name(std::string_view reference) {
  std::error_code ec;
  if (!fs::exists(fs::path(reference), ec)) {
    if (const auto id = parse_hub_id(reference)) return id->name();
  }
  const auto dir = fs::path(reference).lexically_normal();
  return (dir.has_filename() ? dir.filename() : dir.parent_path().filename()).string();
}

fs::path resolve_model(std::string_view reference, const Environment& env,
                       const ResolveOptions& options) {
  const fs::path as_path(reference);
  std::error_code ec;
  if (fs::exists(as_path, ec)) return as_path;
  const auto id = parse_hub_id(reference);
  if (!id) {
    throw Error(ErrorKind::kNotFound, "model '" + std::string(reference) +
                                          "' is neither an existing folder nor a Hub id "
                                          "(org/name or org/name@revision)");
  }
  Resolver resolver(*id, env, options);
  return resolver.run();
}

fs::path resolve_file(std::string_view reference, const std::string& path, const Environment& env) {
  const auto id = parse_hub_id(reference);
  if (!id)
    throw Error(ErrorKind::kNotFound,
                "'" + std::string(reference.substr(0, 80)) + "' is not a Hub id (org/name)");
  ResolveOptions quiet;
  Resolver resolver(*id, env, quiet);
  try {
    return resolver.one_file(path);
  } catch (const NetworkError& e) {
    throw Error(ErrorKind::kUnavailable, std::string(e.what()) + " (fetching " + path + " of " +
                                             std::string(reference) + ")");
  }
}

}  // namespace onepass::hub
