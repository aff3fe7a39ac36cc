// Broken model folders and bad input lines, each through `onepass run`: exit code 2 and one
// line on stderr naming the problem (and never the full path of the folder). The broken
// folders are copies of the bert-tiny-nli fixture, each broken in one way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"
#include "tests/weights/safetensors_writer.h"

namespace onepass {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::read_text;
using testing::run_onepass;
using testing::TempDir;

const fs::path kFixture = fs::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models/bert-tiny-nli";
const std::string kGoodLine = R"({"input_ids":[12,100,200,13]})"
                              "\n";

class BrokenModel : public ::testing::Test {
 protected:
  BrokenModel() : dir_("broken"), model_(dir_.path() / "model") {
    fs::create_directories(model_);
    for (const char* f : {"config.json", "model.safetensors"})
      fs::copy_file(kFixture / f, model_ / f);
  }

  // Runs the binary on the broken folder; asserts the one-line, exit-2 contract.
  std::string run_error(const std::string& input = kGoodLine) {
    const auto r = run_onepass({"run", "--model", model_.string()}, input);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, ::testing::StartsWith("onepass: error: "));
    EXPECT_EQ(r.err.find(dir_.path().string()), std::string::npos)
        << "message leaks a full path: " << r.err;
    return r.err;
  }

  nlohmann::json config() { return nlohmann::json::parse(read_text(model_ / "config.json")); }
  void write_config(const nlohmann::json& j) {
    testing::write_text(model_ / "config.json", j.dump(2));
  }

  // Rewrites the safetensors header with `edit` applied, keeping the data section as is.
  template <typename Edit>
  void edit_safetensors_header(Edit edit) {
    const std::string bytes = read_text(model_ / "model.safetensors");
    std::uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    auto header = nlohmann::json::parse(bytes.substr(8, n));
    edit(header);
    std::string text = header.dump();
    while ((8 + text.size()) % 8 != 0) text.push_back(' ');
    std::vector<std::uint8_t> out = testing::raw_header_file(text, 0);
    out.insert(out.end(), bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n), bytes.end());
    testing::write_file(model_ / "model.safetensors", out);
  }

  TempDir dir_;
  fs::path model_;
};

TEST_F(BrokenModel, IntactCopyRuns) {
  const auto r = run_onepass({"run", "--model", model_.string()}, kGoodLine);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"label\""));
}

TEST_F(BrokenModel, MissingConfig) {
  fs::remove(model_ / "config.json");
  EXPECT_THAT(run_error(), HasSubstr("no config.json"));
}

TEST_F(BrokenModel, MissingWeights) {
  fs::remove(model_ / "model.safetensors");
  EXPECT_THAT(run_error(), HasSubstr("no model.safetensors"));
}

TEST_F(BrokenModel, PytorchBinThatIsNotAZipIsRefused) {
  fs::remove(model_ / "model.safetensors");
  testing::write_text(model_ / "pytorch_model.bin", "not loaded");
  EXPECT_THAT(run_error(), HasSubstr("pytorch_model.bin: file is too short to be a zip archive"));
}

// A checkpoint whose pickle calls os.system (tools/fixtures/make_torch_bin.py): refused by name,
// and the command it carries never runs.
TEST_F(BrokenModel, PytorchBinCallingOsSystemIsRefused) {
  fs::remove(model_ / "model.safetensors");
  fs::copy_file(fs::path(ONEPASS_TEST_DATA_DIR) / "torch_bin/evil_system.bin",
                model_ / "pytorch_model.bin");
  EXPECT_THAT(run_error(), HasSubstr("pickle global posix.system is not allowed"));
  EXPECT_FALSE(fs::exists(dir_.path() / "onepass-pickle-ran"));
  EXPECT_FALSE(fs::exists(model_ / "onepass-pickle-ran"));
}

TEST_F(BrokenModel, TruncatedSafetensors) {
  const auto size = fs::file_size(model_ / "model.safetensors");
  fs::resize_file(model_ / "model.safetensors", size - 1000);
  EXPECT_THAT(run_error(), HasSubstr("outside the file (truncated file?)"));
}

TEST_F(BrokenModel, TruncatedInsideHeader) {
  fs::resize_file(model_ / "model.safetensors", 100);
  EXPECT_THAT(run_error(), HasSubstr("header size runs past the end of the file"));
}

TEST_F(BrokenModel, OverlappingSafetensorsOffsets) {
  edit_safetensors_header([](nlohmann::json& h) {
    // Slide one tensor 4 bytes back into its predecessor; its byte count stays right.
    auto& t = h["bert.embeddings.position_embeddings.weight"]["data_offsets"];
    t[0] = t[0].get<std::uint64_t>() - 4;
    t[1] = t[1].get<std::uint64_t>() - 4;
  });
  EXPECT_THAT(run_error(), HasSubstr("overlapping data_offsets"));
}

TEST_F(BrokenModel, ByteCountNotMatchingShape) {
  edit_safetensors_header([](nlohmann::json& h) { h["classifier.bias"]["shape"] = {4}; });
  EXPECT_THAT(run_error(),
              HasSubstr("tensor classifier.bias has 12 bytes but its dtype and shape need 16"));
}

TEST_F(BrokenModel, ShapeNotMatchingConfig) {
  auto c = config();
  c["vocab_size"] = 2601;
  write_config(c);
  EXPECT_THAT(run_error(), HasSubstr("has shape [2600, 64] but config.json implies [2601, 64]"));
}

TEST_F(BrokenModel, UnsupportedArchitecture) {
  auto c = config();
  c["architectures"] = {"GPT2LMHeadModel"};
  write_config(c);
  const auto err = run_error();
  EXPECT_THAT(err, HasSubstr("unsupported architecture GPT2LMHeadModel"));
  EXPECT_THAT(err, HasSubstr("BertForSequenceClassification"));
  EXPECT_THAT(err, HasSubstr("XLMRobertaForSequenceClassification"));
}

TEST_F(BrokenModel, InvalidConfigJson) {
  testing::write_text(model_ / "config.json", "{\"hidden_size\": ");
  EXPECT_THAT(run_error(), HasSubstr("config.json: not valid JSON"));
}

TEST_F(BrokenModel, NanWeight) {
  std::string bytes = read_text(model_ / "model.safetensors");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(bytes.data() + bytes.size() - 4, &nan, 4);  // last tensor, last element
  testing::write_file(model_ / "model.safetensors",
                      std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
  EXPECT_THAT(run_error(), HasSubstr("contains NaN or Inf"));
}

TEST_F(BrokenModel, IdOutsideVocabulary) {
  EXPECT_THAT(run_error(kGoodLine + R"({"input_ids":[12,2600,13]})"
                                    "\n"),
              HasSubstr("line 2: token id 2600 is outside the vocabulary (vocab_size 2600)"));
}

TEST_F(BrokenModel, MoreTokensThanMaxPositionEmbeddings) {
  std::string ids = "12";
  for (int i = 0; i < 512; ++i) ids += ",100";
  EXPECT_THAT(run_error(R"({"input_ids":[)" + ids + "]}\n"),
              HasSubstr("line 1: 513 tokens is more than the model's maximum of 512"));
}

TEST_F(BrokenModel, BadLines) {
  EXPECT_THAT(run_error("{\"input_ids\": [1, 2\n"), HasSubstr("line 1: not valid JSON"));
  EXPECT_THAT(run_error(kGoodLine + "\n" +
                        R"({"input_ids":"12 13"})"
                        "\n"),
              HasSubstr("line 3: \"input_ids\" must be a list of integers"));
  EXPECT_THAT(run_error(R"({"input_ids":[12,13],"token_type_ids":[0]})"
                        "\n"),
              HasSubstr("line 1: token_type_ids has 1 entries but input_ids has 2"));
  EXPECT_THAT(run_error(R"({"input_ids":[12,13],"token_type_ids":[0,2]})"
                        "\n"),
              HasSubstr("line 1: token type id 2 is outside the model's type_vocab_size 2"));
  EXPECT_THAT(run_error(R"({"input_ids":[]})"
                        "\n"),
              HasSubstr("line 1: the sequence is empty"));
  EXPECT_THAT(run_error(R"({"id":1})"
                        "\n"),
              HasSubstr("line 1: give exactly one of \"input_ids\" or \"text\""));
}

}  // namespace
}  // namespace onepass
