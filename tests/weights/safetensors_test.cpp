// The safetensors parser and the weight store against hand-built files and the fixtures.
#include "weights/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/error.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"
#include "tests/weights/safetensors_writer.h"
#include "weights/finite_scan.h"
#include "weights/weight_store.h"

namespace onepass::weights {
namespace {

using onepass::testing::f32_tensor;
using onepass::testing::make_safetensors;
using onepass::testing::raw_header_file;
using onepass::testing::TempDir;
using ::testing::HasSubstr;

const std::filesystem::path kModels =
    std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models";

std::string parse_error(const std::vector<std::uint8_t>& file) {
  try {
    parse_safetensors_header(file, "model.safetensors");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    return e.what();
  }
  return "no error";
}

TEST(Safetensors, ParsesValidFileSortedByOffset) {
  const auto file =
      make_safetensors({f32_tensor("b", {2, 3}, {1, 2, 3, 4, 5, 6}), f32_tensor("a", {1}, {7})});
  const auto header = parse_safetensors_header(file, "x");
  ASSERT_EQ(header.tensors.size(), 2u);
  EXPECT_EQ(header.tensors[0].name, "b");
  EXPECT_EQ(header.tensors[0].shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(header.tensors[0].end, 24u);
  EXPECT_EQ(header.tensors[1].begin, 24u);
  EXPECT_EQ(header.data_offset % 8, 0u);
}

TEST(Safetensors, RejectsShortFileAndOversizedHeader) {
  EXPECT_THAT(parse_error({1, 2, 3}), HasSubstr("shorter than the 8-byte header size"));
  auto file = make_safetensors({f32_tensor("a", {1}, {1})});
  file[0] = 0xff;
  file[1] = 0xff;
  EXPECT_THAT(parse_error(file), HasSubstr("header size runs past the end"));
  file[6] = 0xff;
  EXPECT_THAT(parse_error(file), HasSubstr("implausibly large"));
}

TEST(Safetensors, RejectsInvalidJsonAndNonObject) {
  EXPECT_THAT(parse_error(raw_header_file("{\"a\": ", 0)), HasSubstr("not valid JSON"));
  EXPECT_THAT(parse_error(raw_header_file("[1, 2]", 0)), HasSubstr("not a JSON object"));
}

TEST(Safetensors, RejectsOffsetsPastTheData) {
  auto file = make_safetensors({f32_tensor("a", {4}, {1, 2, 3, 4})});
  file.resize(file.size() - 4);  // truncated download
  EXPECT_THAT(parse_error(file), HasSubstr("tensor a has data_offsets outside the file"));
}

TEST(Safetensors, RejectsOverlappingTensors) {
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  EXPECT_THAT(parse_error(raw_header_file(header, 12)), HasSubstr("overlapping data_offsets"));
}

TEST(Safetensors, RejectsByteCountThatDisagreesWithShape) {
  const std::string header = R"({"a":{"dtype":"F16","shape":[3],"data_offsets":[0,8]}})";
  EXPECT_THAT(parse_error(raw_header_file(header, 8)),
              HasSubstr("tensor a has 8 bytes but its dtype and shape need 6"));
}

TEST(Safetensors, RejectsBadEntries) {
  EXPECT_THAT(
      parse_error(raw_header_file(R"({"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}})", 1)),
      HasSubstr("unknown dtype Q4"));
  EXPECT_THAT(
      parse_error(raw_header_file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4)),
      HasSubstr("invalid dimension"));
  EXPECT_THAT(
      parse_error(raw_header_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4)),
      HasSubstr("outside the file"));
  EXPECT_THAT(parse_error(raw_header_file(R"({"a":{"dtype":"F32","shape":[1]}})", 4)),
              HasSubstr("data_offsets"));
  EXPECT_THAT(
      parse_error(raw_header_file(
          R"({"a":{"dtype":"F64","shape":[1099511627776,1099511627776],"data_offsets":[0,8]}})",
          8)),
      HasSubstr("shape that overflows"));
}

WeightStore store_from(const TempDir& dir, const std::vector<std::uint8_t>& bytes) {
  onepass::testing::write_file(dir.path() / "model.safetensors", bytes);
  return WeightStore::open(dir.path());
}

TEST(WeightStore, ConvertsHalfAndBfloat16) {
  TempDir dir("weights");
  // 1.0, -2.0, 65504 (max half), 2^-24 (smallest subnormal half) in F16; 1.0, -3.0 in BF16.
  onepass::testing::RawTensor half{
      "h", "F16", {4}, {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00}};
  onepass::testing::RawTensor bf{"b", "BF16", {2}, {0x80, 0x3f, 0x40, 0xc0}};
  const auto store = store_from(dir, make_safetensors({half, bf}));
  const auto h = store.get("h", {4});
  EXPECT_EQ(h.data[0], 1.0f);
  EXPECT_EQ(h.data[1], -2.0f);
  EXPECT_EQ(h.data[2], 65504.0f);
  EXPECT_EQ(h.data[3], std::ldexp(1.0f, -24));
  const auto b = store.get("b", {2});
  EXPECT_EQ(b.data[0], 1.0f);
  EXPECT_EQ(b.data[1], -3.0f);
}

TEST(WeightStore, ReportsNanNamingTheTensor) {
  TempDir dir("weights");
  const auto bytes = make_safetensors(
      {f32_tensor("encoder.w", {2}, {1.0f, std::numeric_limits<float>::quiet_NaN()})});
  try {
    store_from(dir, bytes);
    FAIL() << "NaN accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    EXPECT_THAT(e.what(), HasSubstr("tensor encoder.w contains NaN or Inf"));
  }
}

// A large tensor is scanned in two halves at once (split here above 8 floats instead of 16 Mi,
// the same code); the index found is still the first non-finite element, wherever it falls.
TEST(FiniteScan, FindsTheFirstNonFiniteElementInEitherHalf) {
  constexpr std::size_t kFloats = 4099;  // over one 4096-float block, halves of 2049 and 2050
  constexpr std::size_t kHalf = kFloats / 2;
  const std::pair<std::vector<std::size_t>, std::size_t> cases[] = {
      {{}, kFloats},                        // none
      {{kHalf + 5}, kHalf + 5},             // in the second half only
      {{kFloats - 1}, kFloats - 1},         // the last
      {{kHalf - 3, kHalf + 1}, kHalf - 3},  // in both: the first
      {{0, kHalf}, 0},
  };
  for (const auto& [bad, first] : cases) {
    std::vector<float> values(kFloats, 0.25f);
    for (const std::size_t i : bad) values[i] = std::numeric_limits<float>::infinity();
    EXPECT_EQ(onepass::weights::first_non_finite(values.data(), kFloats, 8), first);
    EXPECT_EQ(onepass::weights::first_non_finite(values.data(), kFloats), first);  // in order
  }
}

TEST(WeightStore, ZeroCopyF32FromFixtureWithShapeCheck) {
  const auto store = WeightStore::open(kModels / "bert-tiny-nli");
  EXPECT_EQ(store.names().size(), 41u);
  const auto w = store.get("bert.embeddings.word_embeddings.weight", {2600, 64});
  EXPECT_EQ(w.numel(), 2600 * 64);
  try {
    store.get("bert.embeddings.word_embeddings.weight", {2601, 64});
    FAIL() << "shape mismatch accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("has shape [2600, 64] but config.json implies [2601, 64]"));
  }
  EXPECT_THROW(store.get("bert.nope", {1}), Error);
}

TEST(WeightStore, ReportsMissingWeightsAndReadsPytorchBin) {
  TempDir dir("weights");
  try {
    WeightStore::open(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
  // A pytorch_model.bin is read by the checkpoint reader (torch_checkpoint_test.cpp), which
  // refuses one that is not a zip checkpoint.
  onepass::testing::write_text(dir.path() / "pytorch_model.bin", "pickle");
  try {
    WeightStore::open(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    EXPECT_THAT(e.what(), HasSubstr("pytorch_model.bin: file is too short to be a zip archive"));
  }
}

TEST(WeightStore, ReadsShardedIndex) {
  TempDir dir("weights");
  onepass::testing::write_file(dir.path() / "model-00001-of-00002.safetensors",
                               make_safetensors({f32_tensor("a", {2}, {1, 2})}));
  onepass::testing::write_file(
      dir.path() / "model-00002-of-00002.safetensors",
      make_safetensors({f32_tensor("b", {1}, {3}), f32_tensor("c", {1}, {4})}));
  onepass::testing::write_text(
      dir.path() / "model.safetensors.index.json",
      R"({"metadata":{},"weight_map":{"a":"model-00001-of-00002.safetensors",)"
      R"("b":"model-00002-of-00002.safetensors","c":"model-00002-of-00002.safetensors"}})");
  const auto store = WeightStore::open(dir.path());
  EXPECT_EQ(store.get("a", {2}).data[1], 2.0f);
  EXPECT_EQ(store.get("c", {1}).data[0], 4.0f);
  EXPECT_EQ(store.parameter_count(), 4);

  onepass::testing::write_text(dir.path() / "model.safetensors.index.json",
                               R"({"weight_map":{"a":"../model-00001-of-00002.safetensors"}})");
  EXPECT_THROW(WeightStore::open(dir.path()), Error);
  onepass::testing::write_text(dir.path() / "model.safetensors.index.json",
                               R"({"weight_map":{"z":"model-00001-of-00002.safetensors"}})");
  try {
    WeightStore::open(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("lists tensor z"));
  }
}

}  // namespace
}  // namespace onepass::weights
