// The PyTorch checkpoint reader against files torch.save wrote (tests/data/torch_bin, made by
// tools/fixtures/make_torch_bin.py from the fixtures' model.safetensors) and hostile variants:
// every weight must equal the safetensors twin bit for bit, and every hostile file must be
// refused with an error that names the problem, without anything in it running.
#include "weights/torch_checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "base/error.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"
#include "weights/torch_pickle.h"
#include "weights/weight_store.h"

namespace onepass::weights {
namespace {

namespace fs = std::filesystem;
using onepass::testing::TempDir;
using ::testing::HasSubstr;

const fs::path kData = fs::path(ONEPASS_TEST_DATA_DIR);
const fs::path kTorchBin = kData / "torch_bin";
using onepass::testing::fixture_model;

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A model folder holding `files` copied from tests/data (source path -> name in the folder).
void copy_into(const TempDir& dir, const std::vector<std::pair<fs::path, std::string>>& files) {
  for (const auto& [from, name] : files) fs::copy_file(from, dir.path() / name);
}

// The error read_torch_checkpoint throws for this image ("no error" when it accepts it).
std::string checkpoint_error(const std::vector<std::uint8_t>& file) {
  try {
    read_torch_checkpoint(file, "pytorch_model.bin");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    return e.what();
  }
  return "no error";
}

// A pickle from a string literal, embedded NUL bytes included.
template <std::size_t N>
std::string pickle_error(const char (&literal)[N]) {
  const std::string pickle(literal, N - 1);
  try {
    parse_torch_pickle(
        std::span(reinterpret_cast<const std::uint8_t*>(pickle.data()), pickle.size()), "data.pkl");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    return e.what();
  }
  return "no error";
}

// Every tensor of `a` and `b` has the same shape and the same float bits.
void expect_bitwise_equal(const WeightStore& a, const WeightStore& b) {
  ASSERT_EQ(a.names(), b.names());
  ASSERT_GT(a.names().size(), 10u);
  for (const auto& name : a.names()) {
    SCOPED_TRACE(name);
    ASSERT_EQ(a.dtype_of(name), b.dtype_of(name));
    if (!stored_dtype_is_float(a.dtype_of(name))) continue;  // position_ids buffers
    const auto& shape = a.shape_of(name);
    const auto va = a.get(name, shape);
    const auto vb = b.get(name, shape);
    ASSERT_EQ(std::memcmp(va.data, vb.data, static_cast<std::size_t>(va.numel()) * sizeof(float)),
              0);
  }
}

TEST(TorchCheckpoint, SingleFileEqualsSafetensorsBitForBit) {
  TempDir dir("torch_single");
  copy_into(dir, {{kTorchBin / "bert-tiny-nli/pytorch_model.bin", "pytorch_model.bin"}});
  const auto from_bin = WeightStore::open(dir.path());
  const auto from_safetensors = WeightStore::open(fixture_model("bert-tiny-nli"));
  expect_bitwise_equal(from_bin, from_safetensors);
  EXPECT_EQ(from_bin.parameter_count(), from_safetensors.parameter_count());
}

TEST(TorchCheckpoint, StridedAndSharedStorageTensorsAreRead) {
  // make_torch_bin.py saves this matrix as a transposed view and the LayerNorm biases as slices
  // of one storage: check the reader saw them that way, so the bitwise test above covers them.
  const auto tensors =
      read_torch_checkpoint(read_bytes(kTorchBin / "bert-tiny-nli/pytorch_model.bin"), "bin");
  int strided = 0, biases = 0;
  std::set<std::uint64_t> bias_offsets;
  for (const auto& t : tensors) {
    if (!t.contiguous()) {
      ++strided;
      EXPECT_EQ(t.name, "bert.encoder.layer.0.attention.self.query.weight");
      EXPECT_EQ(t.stride, (std::vector<std::int64_t>{1, t.shape[0]}));
    }
    if (t.name.ends_with("LayerNorm.bias")) {
      ++biases;
      bias_offsets.insert(t.data_offset);
    }
  }
  EXPECT_EQ(strided, 1);
  ASSERT_GE(biases, 3);
  // One storage: consecutive views 4 * hidden bytes apart.
  EXPECT_EQ(*bias_offsets.rbegin() - *bias_offsets.begin(),
            static_cast<std::uint64_t>(biases - 1) * 4 * 64);
}

TEST(TorchCheckpoint, ShardedIndexEqualsSafetensors) {
  TempDir dir("torch_sharded");
  const auto src = kTorchBin / "xlmr-tiny-nli";
  copy_into(dir, {{src / "pytorch_model.bin.index.json", "pytorch_model.bin.index.json"},
                  {src / "pytorch_model-00001-of-00002.bin", "pytorch_model-00001-of-00002.bin"},
                  {src / "pytorch_model-00002-of-00002.bin", "pytorch_model-00002-of-00002.bin"}});
  const auto files = find_weight_files(dir.path());
  ASSERT_TRUE(files);
  EXPECT_EQ(files->format, WeightFormat::kTorch);
  EXPECT_EQ(files->index, "pytorch_model.bin.index.json");
  EXPECT_EQ(files->files.size(), 2u);
  expect_bitwise_equal(WeightStore::open(dir.path()),
                       WeightStore::open(fixture_model("xlmr-tiny-nli")));

  fs::remove(dir.path() / "pytorch_model-00002-of-00002.bin");
  try {
    WeightStore::open(dir.path());
    FAIL() << "a missing shard was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_THAT(e.what(), HasSubstr("pytorch_model-00002-of-00002.bin listed in "
                                    "pytorch_model.bin.index.json is missing"));
  }
}

TEST(TorchCheckpoint, HalfBf16ParameterAndIntegerBuffers) {
  auto store = WeightStore::from_mapped(MappedFile(kTorchBin / "dtypes.bin"), "dtypes.bin",
                                        WeightFormat::kTorch);
  const auto half = store.get("half", {4});
  EXPECT_EQ(std::vector<float>(half.data, half.data + 4),
            (std::vector<float>{1.5f, -2.0f, 65504.0f, 5.9604645e-08f}));
  const auto bf16 = store.get("bf16", {2, 2});
  EXPECT_EQ(bf16.data[0], 1.0f);
  EXPECT_EQ(bf16.data[1], -0.5f);
  EXPECT_NEAR(bf16.data[2], 3.0e38f, 3.0e38f / 128);  // bf16 keeps 8 bits of mantissa
  EXPECT_NEAR(bf16.data[3], 1.0e-3f, 1.0e-3f / 128);
  const auto param = store.get("param", {2});  // saved as torch.nn.Parameter
  EXPECT_EQ(param.data[0], 0.25f);
  EXPECT_EQ(param.data[1], -8.0f);
  EXPECT_EQ(store.get("empty", {0, 3}).numel(), 0);
  // Integer buffers are listed but are not weights, as in the safetensors path.
  EXPECT_TRUE(store.contains("position_ids"));
  try {
    store.get("position_ids", {1, 6});
    FAIL() << "an int64 buffer was returned as floats";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("has dtype I64"));
  }
  EXPECT_EQ(store.parameter_count(), 4 + 4 + 2);
}

TEST(TorchCheckpoint, SafetensorsWinsWhenBothArePresent) {
  // The pickle here would be refused: proving it is never opened when safetensors exist.
  TempDir dir("torch_both");
  copy_into(dir,
            {{fs::path(fixture_model("bert-tiny-nli")) / "model.safetensors", "model.safetensors"},
             {kTorchBin / "evil_system.bin", "pytorch_model.bin"}});
  EXPECT_EQ(find_weight_files(dir.path())->format, WeightFormat::kSafetensors);
  EXPECT_GT(WeightStore::open(dir.path()).parameter_count(), 0);
}

TEST(TorchCheckpoint, RefusesOsSystemWithoutRunningIt) {
  TempDir dir("torch_evil");
  copy_into(dir, {{kTorchBin / "evil_system.bin", "pytorch_model.bin"}});
  const auto cwd = fs::current_path();
  fs::current_path(dir.path());  // where `touch onepass-pickle-ran` would write
  std::string what;
  try {
    WeightStore::open(dir.path());
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    what = e.what();
  }
  fs::current_path(cwd);
  // os.system pickles as posix.system on Linux.
  EXPECT_THAT(what, HasSubstr("pickle global posix.system is not allowed"));
  EXPECT_THAT(what, HasSubstr("pytorch_model.bin"));
  EXPECT_FALSE(fs::exists(dir.path() / "onepass-pickle-ran"));
}

TEST(TorchCheckpoint, RefusesUnknownGlobalAndBadOffsetsAndLegacyFormat) {
  EXPECT_THAT(checkpoint_error(read_bytes(kTorchBin / "evil_global.bin")),
              HasSubstr("pickle global collections.Counter is not allowed"));
  EXPECT_THAT(checkpoint_error(read_bytes(kTorchBin / "evil_offset.bin")),
              HasSubstr("tensor weight reaches element 4 of storage 0, which has 4 elements"));
  EXPECT_THAT(checkpoint_error(read_bytes(kTorchBin / "legacy.bin")),
              HasSubstr("legacy (pre-PyTorch 1.6) checkpoint"));
}

TEST(TorchCheckpoint, RefusesTruncatedZip) {
  const auto good = read_bytes(kTorchBin / "dtypes.bin");
  ASSERT_EQ(checkpoint_error(good), "no error");
  for (const std::size_t keep :
       {std::size_t{0}, std::size_t{10}, good.size() / 2, good.size() - 30}) {
    SCOPED_TRACE(keep);
    const std::vector<std::uint8_t> cut(good.begin(), good.begin() + static_cast<long>(keep));
    EXPECT_THAT(checkpoint_error(cut), HasSubstr("truncated"));
  }
}

// Offset of the central directory header of entry `name` in a zip image.
std::size_t central_header(const std::vector<std::uint8_t>& zip, const std::string& name) {
  for (std::size_t i = 0; i + 46 + name.size() <= zip.size(); ++i) {
    if (zip[i] == 0x50 && zip[i + 1] == 0x4b && zip[i + 2] == 1 && zip[i + 3] == 2 &&
        std::memcmp(zip.data() + i + 46, name.data(), name.size()) == 0) {
      return i;
    }
  }
  ADD_FAILURE() << "no central header for " << name;
  return 0;
}

void set_u32(std::vector<std::uint8_t>& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    bytes[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
}

TEST(TorchCheckpoint, RefusesEntryPastEndAndWrongStorageSize) {
  auto file = read_bytes(kTorchBin / "dtypes.bin");
  const auto at = central_header(file, "dtypes/data/2");  // position_ids, 6 x int64
  set_u32(file, at + 20, 0x7fffffff);                     // compressed size
  set_u32(file, at + 24, 0x7fffffff);                     // uncompressed size
  EXPECT_THAT(checkpoint_error(file),
              HasSubstr("zip entry dtypes/data/2 points past the end of the file"));
  set_u32(file, at + 20, 40);
  set_u32(file, at + 24, 40);
  EXPECT_THAT(checkpoint_error(file), HasSubstr("storage 2 holds 40 bytes, not 6 elements of I64"));
  set_u32(file, at + 42, static_cast<std::uint32_t>(file.size() - 4));  // local header offset
  EXPECT_THAT(checkpoint_error(file), HasSubstr("dtypes/data/2 points past the end"));
}

TEST(TorchCheckpoint, RefusesCompressedEntry) {
  auto file = read_bytes(kTorchBin / "dtypes.bin");
  file[central_header(file, "dtypes/data.pkl") + 10] = 8;  // method: deflate
  EXPECT_THAT(checkpoint_error(file), HasSubstr("zip entry dtypes/data.pkl is compressed"));
}

TEST(TorchCheckpoint, RefusesStorageKeyWithoutEntry) {
  auto file = read_bytes(kTorchBin / "dtypes.bin");
  // The first persistent id's key: BINUNICODE of length 1 holding "0".
  const std::string key(
      "X\x01\x00\x00\x00"
      "0",
      6);
  const auto it = std::search(file.begin(), file.end(), key.begin(), key.end());
  ASSERT_NE(it, file.end());
  *(it + 5) = '9';
  EXPECT_THAT(checkpoint_error(file),
              HasSubstr("storage key '9' has no data/9 entry in the archive"));
}

TEST(TorchPickle, RefusesWhatAStateDictNeverHolds) {
  // STACK_GLOBAL (protocol 4) of builtins.eval.
  EXPECT_THAT(pickle_error("\x80\x04\x8c\x08"
                           "builtins\x8c\x04"
                           "eval\x93."),
              HasSubstr("pickle global builtins.eval is not allowed"));
  EXPECT_THAT(pickle_error("\x80\x02"
                           "cos\nsystem\n(X\x02\x00\x00\x00lstR."),
              HasSubstr("pickle global os.system is not allowed"));
  // BUILD on a tensor-less object: sets attributes of an int.
  EXPECT_THAT(pickle_error("\x80\x02K\x01}b."), HasSubstr("BUILD on int is not allowed"));
  // A storage type called directly instead of named in a persistent id.
  EXPECT_THAT(pickle_error("\x80\x02"
                           "ctorch\nFloatStorage\n)R."),
              HasSubstr("storage type is called"));
  EXPECT_THAT(pickle_error("\x80\x02i__main__\nX\n."), HasSubstr("opcode 0x69 is not allowed"));
  EXPECT_THAT(pickle_error("\x80\x02}h\x07."), HasSubstr("memo entry 7 never written"));
  EXPECT_THAT(pickle_error("\x80\x02}"), HasSubstr("pickle is truncated"));
  EXPECT_THAT(pickle_error("\x80\x02K\x01."), HasSubstr("top-level object is int, expected dict"));
  EXPECT_THAT(pickle_error("\x80\x02}X\x01\x00\x00\x00"
                           "aK\x01s."),
              HasSubstr("state_dict entry a is int, not a tensor"));
}

}  // namespace
}  // namespace onepass::weights
