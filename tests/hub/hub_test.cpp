// The Hub resolver against a Hub of our own on loopback (hub_server.py): the cache layout
// huggingface_hub writes, revisions, redirects (relative, and absolute to a second host without
// the token), gated repos, corrupted and dropped downloads, concurrent downloaders, offline mode.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"
#include "http/client.h"
#include "hub/cache.h"
#include "hub/resolve.h"
#include "hub_server.h"
#include "tests/support/files.h"
#include "weights/weight_store.h"

namespace onepass::hub {
namespace {
using onepass::testing::HubServer;
namespace fs = std::filesystem;
using onepass::testing::read_text;

const fs::path kFixture = fs::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models/bert-tiny-nli";

class HubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() /
             ("onepass_hub_test_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(cache_);
    env_.endpoint = server_.endpoint();
    env_.cache_dir = cache_;
    env_.progress = false;
  }
  void TearDown() override { fs::remove_all(cache_); }

  // Runs `f` and returns the message of the onepass::Error it throws.
  template <typename F>
  std::string error_of(F f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error thrown";
    return {};
  }

  HubServer server_;
  fs::path cache_;
  Environment env_;
};

TEST_F(HubTest, FolderReferenceIsReturnedUnchanged) {
  EXPECT_EQ(resolve_model(kFixture.string(), env_), kFixture);
  EXPECT_TRUE(server_.log().empty());
}

TEST_F(HubTest, DownloadsOnlyNeededFilesInHuggingFaceLayout) {
  env_.token = "some-token";
  const fs::path snapshot = resolve_model("acme/tiny-nli@v1", env_);
  const fs::path repo = cache_ / "models--acme--tiny-nli";
  const std::string commit = read_text(repo / "refs/v1");
  ASSERT_EQ(commit.size(), 40u);
  EXPECT_EQ(snapshot, repo / "snapshots" / commit);
  for (const char* name : {"config.json", "model.safetensors", "tokenizer.json", "vocab.txt",
                           "tokenizer_config.json", "special_tokens_map.json"}) {
    const fs::path pointer = snapshot / name;
    ASSERT_TRUE(fs::is_symlink(pointer)) << name;
    const fs::path target = fs::read_symlink(pointer);
    EXPECT_TRUE(target.is_relative()) << target;
    EXPECT_EQ(target.parent_path(), fs::path("../../blobs")) << target;
    EXPECT_EQ(read_text(pointer), read_text(kFixture / name)) << name;
  }
  // An LFS blob is named by its sha256 (X-Linked-Etag), a small file by its git blob id.
  const auto weights_blob = fs::read_symlink(snapshot / "model.safetensors").filename().string();
  EXPECT_EQ(weights_blob.size(), 64u);
  EXPECT_EQ(fs::read_symlink(snapshot / "config.json").filename().string().size(), 40u);
  // Files the repo lacks are remembered, as huggingface_hub does.
  EXPECT_TRUE(fs::exists(repo / ".no_exist" / commit / "added_tokens.json"));
  // Nothing onepass does not read was fetched.
  EXPECT_FALSE(fs::exists(snapshot / "model.onnx"));
  EXPECT_FALSE(fs::exists(snapshot / "golden.json"));
  EXPECT_TRUE(server_.requests("hub", "model.onnx").empty());
  EXPECT_TRUE(server_.requests("hub", "golden.json").empty());
  // The weights came from the second host, without the token; the Hub got it.
  const auto cdn = server_.requests("cdn", weights_blob);
  ASSERT_EQ(cdn.size(), 1u);
  EXPECT_TRUE(cdn[0]["auth"].is_null());
  const auto api = server_.requests("hub", "/api/models/acme/tiny-nli/revision/v1");
  ASSERT_EQ(api.size(), 1u);
  EXPECT_EQ(api[0]["auth"], "Bearer some-token");
  // A second resolve of the same commit downloads nothing.
  EXPECT_EQ(resolve_model("acme/tiny-nli@" + commit, env_), snapshot);
  EXPECT_EQ(server_.requests("cdn", "/blobs/").size(), 1u);
}

// The Dense modules modules.json names come down (both weight formats), an unused one does not.
TEST_F(HubTest, SentenceTransformersDenseModulesComeWithTheModel) {
  const fs::path snapshot = resolve_model("acme/st-dense", env_);
  const fs::path fixture = kFixture.parent_path() / "bert-tiny-st-dense";
  for (const char* name :
       {"modules.json", "1_Pooling/config.json", "2_Dense/config.json", "2_Dense/model.safetensors",
        "3_Dense/config.json", "3_Dense/pytorch_model.bin"}) {
    ASSERT_TRUE(fs::exists(snapshot / name)) << name;
    EXPECT_EQ(read_text(snapshot / name), read_text(fixture / name)) << name;
  }
  EXPECT_FALSE(fs::exists(snapshot / "2_Dense_96"));
  EXPECT_TRUE(server_.requests("hub", "2_Dense_96").empty());
}

TEST(HubModuleFiles, DenseAndPoolingFoldersModulesJsonNames) {
  const std::vector<std::string> repo = {"modules.json",
                                         "1_Pooling/config.json",
                                         "2_Dense/config.json",
                                         "2_Dense/model.safetensors",
                                         "2_Dense/pytorch_model.bin",
                                         "3_Dense/config.json",
                                         "3_Dense/pytorch_model.bin",
                                         "4_Pool/config.json",
                                         "2_Dense_96/config.json"};
  const std::string modules = R"([
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "4_Pool", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
    {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"},
    {"idx": 4, "name": "4", "path": "../x", "type": "sentence_transformers.models.Dense"},
    {"idx": 5, "name": "5", "path": "5_Missing", "type": "sentence_transformers.models.Dense"}])";
  EXPECT_EQ(module_files(modules, repo),
            (std::vector<std::string>{"4_Pool/config.json", "2_Dense/config.json",
                                      "2_Dense/model.safetensors", "3_Dense/config.json",
                                      "3_Dense/pytorch_model.bin"}));
  EXPECT_TRUE(module_files("not json", repo).empty());
  EXPECT_TRUE(module_files(R"({"0": "x"})", repo).empty());
}

TEST_F(HubTest, TwoRevisionsAreTwoSnapshotsSharingBlobs) {
  const fs::path v1 = resolve_model("acme/tiny-nli@v1", env_);
  const fs::path main = resolve_model("acme/tiny-nli", env_);
  EXPECT_NE(v1, main);
  EXPECT_EQ(read_text(cache_ / "models--acme--tiny-nli/refs/main"), main.filename().string());
  EXPECT_EQ(read_text(v1 / "config.json"), read_text(kFixture / "config.json"));
  EXPECT_NE(read_text(main / "config.json").find("onepass_revision"), std::string::npos);
  // Same weights in both: one blob, fetched once; the PyTorch and TF duplicates never.
  EXPECT_EQ(fs::read_symlink(v1 / "model.safetensors"),
            fs::read_symlink(main / "model.safetensors"));
  EXPECT_EQ(server_.requests("cdn", "/blobs/").size(), 1u);
  EXPECT_TRUE(server_.requests("hub", "pytorch_model.bin").empty());
  EXPECT_TRUE(server_.requests("hub", "tf_model.h5").empty());
}

TEST_F(HubTest, FollowsRelativeRedirectOfARenamedRepo) {
  const fs::path snapshot = resolve_model("acme/renamed@v1", env_);
  EXPECT_EQ(read_text(snapshot / "model.safetensors"), read_text(kFixture / "model.safetensors"));
}

TEST_F(HubTest, GatedRepoNeedsToken) {
  const std::string message = error_of([&] { resolve_model("acme/gated", env_); });
  EXPECT_NE(message.find("gated"), std::string::npos) << message;
  EXPECT_NE(message.find("HF_TOKEN"), std::string::npos) << message;
  env_.token = "secret-token";
  const fs::path snapshot = resolve_model("acme/gated", env_);
  EXPECT_EQ(read_text(snapshot / "config.json"), read_text(kFixture / "config.json"));
}

TEST_F(HubTest, UnknownRepoRevisionAndNoWeightsAreClearErrors) {
  std::string message = error_of([&] { resolve_model("acme/nope", env_); });
  EXPECT_NE(message.find("'acme/nope' not found"), std::string::npos) << message;
  message = error_of([&] { resolve_model("acme/tiny-nli@v9", env_); });
  EXPECT_NE(message.find("revision 'v9' not found"), std::string::npos) << message;
  message = error_of([&] { resolve_model("acme/no-weights", env_); });
  EXPECT_NE(message.find("no loadable weights"), std::string::npos) << message;
  message = error_of([&] { resolve_model("not a model", env_); });
  EXPECT_NE(message.find("neither an existing folder nor a Hub id"), std::string::npos);
}

// Repos that ship only PyTorch checkpoints: the resolver fetches pytorch_model.bin, or the index
// and every shard it names, and the weight store reads them to the fixture's own values.
TEST_F(HubTest, PytorchBinOnlyReposLoad) {
  const fs::path models = fs::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models";
  for (const auto& [repo, fixture] : {std::pair{"acme/bin-only", "bert-tiny-nli"},
                                      std::pair{"acme/bin-sharded", "xlmr-tiny-nli"}}) {
    SCOPED_TRACE(repo);
    const fs::path snapshot = resolve_model(repo, env_);
    EXPECT_FALSE(fs::exists(snapshot / "model.safetensors"));
    const auto files = weights::find_weight_files(snapshot);
    ASSERT_TRUE(files);
    EXPECT_EQ(files->format, weights::WeightFormat::kTorch);
    for (const auto& file : files->files) EXPECT_TRUE(fs::exists(snapshot / file)) << file;
    const auto store = weights::WeightStore::open(snapshot);
    const auto reference = weights::WeightStore::open(models / fixture);
    ASSERT_EQ(store.names(), reference.names());
    EXPECT_EQ(store.parameter_count(), reference.parameter_count());
    const std::string name = store.names().front();
    const auto& shape = reference.shape_of(name);
    const auto a = store.get(name, shape);
    const auto b = reference.get(name, shape);
    EXPECT_TRUE(std::equal(a.data, a.data + a.numel(), b.data)) << name;
  }
  EXPECT_FALSE(server_.requests("hub", "pytorch_model-00002-of-00002.bin").empty());
}

TEST_F(HubTest, CorruptedBlobIsDeletedAndFailsLoudly) {
  const std::string message = error_of([&] { resolve_model("acme/corrupt", env_); });
  EXPECT_NE(message.find("checksum mismatch"), std::string::npos) << message;
  const fs::path blobs = cache_ / "models--acme--corrupt/blobs";
  for (const auto& entry : fs::directory_iterator(blobs)) {
    EXPECT_EQ(entry.path().filename().string().size(), 40u)
        << "left behind: " << entry.path();  // only the small git-etag files
  }
}

// A full disk, simulated with a file-size limit in a child process (the limit makes write fail
// with EFBIG where a full disk fails with ENOSPC: the same failed write). The download fails
// naming the write error, no blob of the weights is left looking complete, and a later run
// without the limit finishes the file, resumed from the partial one.
TEST_F(HubTest, DiskFullLeavesNoCompleteBlobAndIsResumedLater) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);  // else the limit kills the process instead of failing write
    const rlimit limit{512 * 1024, 512 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::string message = "no error";
    int code = 2;
    try {
      resolve_model("acme/tiny-nli@v1", env_);
    } catch (const Error& e) {
      message = e.what();
      code = e.kind() == ErrorKind::kUnavailable ? 0 : 1;
    }
    const auto written = ::write(pipe_fds[1], message.data(), message.size());
    (void)written;
    ::_exit(code);
  }
  ::close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << message;
  EXPECT_EQ(WEXITSTATUS(status), 0) << message;
  EXPECT_NE(message.find("cannot write"), std::string::npos) << message;
  EXPECT_NE(message.find("is the disk full?"), std::string::npos) << message;

  const auto weights_size = fs::file_size(kFixture / "model.safetensors");
  const fs::path blobs = cache_ / "models--acme--tiny-nli/blobs";
  bool partial_kept = false;
  for (const auto& entry : fs::directory_iterator(blobs)) {
    if (entry.path().extension() == ".incomplete") {
      partial_kept = true;
      EXPECT_LT(fs::file_size(entry.path()), weights_size);
    } else {
      EXPECT_NE(fs::file_size(entry.path()), weights_size) << "complete-looking " << entry.path();
    }
  }
  EXPECT_TRUE(partial_kept);

  const fs::path snapshot = resolve_model("acme/tiny-nli@v1", env_);
  EXPECT_EQ(read_text(snapshot / "model.safetensors"), read_text(kFixture / "model.safetensors"));
  const auto gets = server_.requests("cdn", "/blobs/");
  ASSERT_FALSE(gets.empty());
  EXPECT_TRUE(gets.back()["range"].is_string()) << "the second run did not resume";
}

TEST_F(HubTest, DroppedConnectionIsResumedWithRange) {
  const fs::path snapshot = resolve_model("acme/flaky", env_);
  EXPECT_EQ(read_text(snapshot / "model.safetensors"), read_text(kFixture / "model.safetensors"));
  const auto gets = server_.requests("cdn", "/blobs/");
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_TRUE(gets[0]["range"].is_null());
  ASSERT_TRUE(gets[1]["range"].is_string());
  const auto size = fs::file_size(kFixture / "model.safetensors");
  EXPECT_EQ(gets[1]["range"], "bytes=" + std::to_string(size / 2) + "-");
}

TEST_F(HubTest, ConcurrentDownloadersShareOneDownload) {
  fs::path a, b;
  std::string error_a, error_b;
  auto download = [&](fs::path& out, std::string& error) {
    try {
      out = resolve_model("acme/slow", env_);
    } catch (const std::exception& e) {
      error = e.what();
    }
  };
  std::thread first([&] { download(a, error_a); });
  std::thread second([&] { download(b, error_b); });
  first.join();
  second.join();
  EXPECT_EQ(error_a, "");
  EXPECT_EQ(error_b, "");
  EXPECT_EQ(a, b);
  EXPECT_EQ(read_text(a / "model.safetensors"), read_text(kFixture / "model.safetensors"));
  EXPECT_EQ(server_.requests("cdn", "/blobs/").size(), 1u);
  EXPECT_TRUE(fs::exists(cache_ / ".locks/models--acme--slow"));
}

TEST_F(HubTest, OfflineServesTheCacheAndNeverTheNetwork) {
  Environment offline = env_;
  offline.offline = true;
  std::string message = error_of([&] { resolve_model("acme/tiny-nli@v1", offline); });
  EXPECT_NE(message.find("HF_HUB_OFFLINE"), std::string::npos) << message;
  const fs::path online = resolve_model("acme/tiny-nli@v1", env_);
  const auto before = server_.log().size();
  EXPECT_EQ(resolve_model("acme/tiny-nli@v1", offline), online);
  EXPECT_EQ(server_.log().size(), before);

  // Unreachable network: the error says a snapshot is cached and how to use it.
  Environment unreachable = env_;
  unreachable.endpoint = "http://127.0.0.1:1";
  message = error_of([&] { resolve_model("acme/tiny-nli@v1", unreachable); });
  EXPECT_NE(message.find("cannot reach"), std::string::npos) << message;
  EXPECT_NE(message.find("HF_HUB_OFFLINE=1"), std::string::npos) << message;
  EXPECT_NE(message.find(online.string()), std::string::npos) << message;
  message = error_of([&] { resolve_model("acme/tiny-nli@v2", unreachable); });
  EXPECT_NE(message.find("has no snapshot"), std::string::npos) << message;
}

TEST(HubReference, ParsesIdsLikeHuggingFaceHub) {
  const auto id = parse_hub_id("MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7@v1.0");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->repo_id, "MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7");
  EXPECT_EQ(id->revision, "v1.0");
  EXPECT_EQ(id->name(), "mDeBERTa-v3-base-xnli-multilingual-nli-2mil7");
  EXPECT_EQ(parse_hub_id("acme/x")->revision, "main");
  EXPECT_FALSE(parse_hub_id("acme"));
  EXPECT_FALSE(parse_hub_id("a/b/c"));
  EXPECT_FALSE(parse_hub_id("../etc"));
  EXPECT_FALSE(parse_hub_id("a--b/c"));
  EXPECT_FALSE(parse_hub_id("a/b@"));
  EXPECT_EQ(default_model_name("acme/tiny-nli@v1"), "tiny-nli");
  EXPECT_FALSE(is_safe_repo_path("../x"));
  EXPECT_FALSE(is_safe_repo_path("a//b"));
  EXPECT_TRUE(is_safe_repo_path("1_Pooling/config.json"));
}

}  // namespace
}  // namespace onepass::hub
