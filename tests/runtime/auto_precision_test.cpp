// `--precision auto` through the runtime with the real engine (runtime/auto_precision.h): the
// fixtures whose int8 the gate refuses fall back, the others are served in int8; a second load
// takes the saved verdict (reported as such, no gate); a corrupt or foreign verdict is ignored and
// replaced; the key follows the folder's files; --precision-check-data is read or refused with the
// line that is wrong.
#include "runtime/auto_precision.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fakes.h"
#include "kernels/matmul.h"
#include "model/precision_check.h"
#include "runtime/precision_verdicts.h"
#include "runtime/runtime.h"
#include "tests/support/fixture_catalogue.h"
#include "tests/support/temp_dir.h"
#include "tokenizer/tokenizer.h"

namespace onepass::runtime {
namespace {

using namespace std::chrono_literals;
using onepass::testing::TempDir;
using testing::fixture_model;

RuntimeOptions auto_options(const std::filesystem::path& state_dir) {
  RuntimeOptions o;
  o.threads = 1;  // the shared test machine is small
  o.auto_precision = true;
  o.auto_precision_options.state_dir = state_dir;
  return o;
}

// The precision each model was served in, after one runtime loaded them all.
std::map<std::string, PrecisionSelection> serve_once(const RuntimeOptions& o,
                                                     std::string* metrics = nullptr) {
  Runtime rt(o);
  EXPECT_TRUE(rt.wait_ready(120s));
  if (metrics) *metrics = rt.render_metrics();
  std::map<std::string, PrecisionSelection> out;
  for (const auto& spec : o.models) {
    const auto d = rt.find_model(spec.name);
    EXPECT_TRUE(d && d->state == ModelState::kReady) << spec.name << ": " << d->load_error;
    if (d) out[spec.name] = d->precision;
  }
  return out;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool cpu_runs(model::Precision p) { return *kernels::precision_unsupported_reason(p) == '\0'; }

// int8 refused -> bf16 where it passes (or fp32), the reason in the verdict; int8 passing ->
// int8; a model's own precision over auto. The refused fixtures come from the catalogue's flag, the
// passing ones are two tasks the gate compares differently (an embedder by cosine, a classifier by
// labels).
TEST(AutoPrecision, FallsBackWhereInt8IsRefusedServesInt8WhereItPassesAndObeysAModel) {
  TempDir state("auto_state");
  RuntimeOptions o = auto_options(state.path());
  const auto refused = onepass::testing::fixtures_where(
      [](const onepass::testing::Fixture& f) { return f.has(onepass::testing::kInt8Refused); });
  ASSERT_FALSE(refused.empty());
  for (const auto& m : refused) o.models.push_back({m, fixture_model(m)});
  for (const char* m : {"bert-tiny-embed", "bert-tiny-nli"})
    o.models.push_back({m, fixture_model(m)});
  // GLiNER models: the gate compares their entities on GLiNER prompts (GlinerGate* below).
  const auto gliner =
      onepass::testing::fixtures_with_task({onepass::testing::FixtureTask::kExtractor});
  ASSERT_FALSE(gliner.empty());
  for (const auto& m : gliner) o.models.push_back({m, fixture_model(m)});
  // A model's own precision (REF#fp32) wins over --precision auto.
  o.models.push_back(
      parse_model_spec("fixed=" + fixture_model("bert-tiny-embed").string() + "#fp32"));
  const auto served = serve_once(o);
  EXPECT_EQ(served.at("fixed").precision, "fp32");
  EXPECT_EQ(served.at("fixed").mode, "fp32");
  EXPECT_EQ(served.at("fixed").source, "");
  for (const auto& m : refused) {
    SCOPED_TRACE(m);
    const PrecisionSelection& p = served.at(m);
    EXPECT_EQ(p.mode, "auto");
    EXPECT_EQ(p.source, "gate");
    EXPECT_NE(p.precision, "int8");
    EXPECT_NE(p.precision, "");
    EXPECT_NE(p.verdict.find("int8 refused ("), std::string::npos) << p.verdict;
    if (!cpu_runs(model::Precision::kBf16)) {
      EXPECT_EQ(p.precision, "fp32");
    }
  }
  for (const auto& m : gliner) {
    SCOPED_TRACE(m);
    const PrecisionSelection& p = served.at(m);
    EXPECT_EQ(p.mode, "auto");
    // int8 ran on the prompts (figures, not a refusal by name) and what is served is what passed.
    EXPECT_EQ(p.verdict.find("int8 not run"), std::string::npos) << p.verdict;
    EXPECT_NE(p.verdict.find(" inputs, agreement "), std::string::npos) << p.verdict;
    if (p.precision != "fp32") {
      EXPECT_NE(p.verdict.find(p.precision + " passed ("), std::string::npos) << p.verdict;
    }
  }
  for (const char* m : {"bert-tiny-embed", "bert-tiny-nli"}) {
    SCOPED_TRACE(m);
    EXPECT_EQ(served.at(m).precision, "int8");
    EXPECT_NE(served.at(m).verdict.find("int8 passed"), std::string::npos);
  }
}

// GLiNER's evidence: its prompts carry the labels and the words' positions; fp32 against itself
// agrees on every entity; an int8 quantized with the wrong scale finds other entities and is
// refused for it; plain texts are refused, since they have no spans to compare.
TEST(AutoPrecision, GlinerGateComparesTheEntitiesOfItsPrompts) {
  const auto dir = fixture_model("gliner-tiny-markerv0");
  const auto tok = tokenizer::load_tokenizer(dir);
  const model::ModelInfo info = model::describe_model_folder(dir);
  const auto examples = model_check_examples(
      dir, *tok, {{"Ada Lovelace lived in London.", std::nullopt, {"person"}}});
  ASSERT_GT(examples.size(), 20u);
  for (const auto& e : examples) {
    ASSERT_FALSE(e.word_positions.empty());
    const auto prompts =
        std::count(e.input_ids.begin(), e.input_ids.end(), info.span.entity_token_id);
    EXPECT_EQ(prompts, &e == &examples.back() ? 1 : std::size(kCheckLabels));
  }
  model::LoadOptions load;
  load.threads = 1;
  const auto reference = model::load_encoder(dir, load);
  const auto same =
      model::compare_precisions(*reference, *reference, examples, model::Precision::kFp32);
  EXPECT_TRUE(same.pass) << model::summarize_failures(same);
  EXPECT_EQ(same.entity_agreement, 1.0);
  load.precision = model::Precision::kInt8;
  load.force_precision = true;
  kernels::testing::set_int8_weight_scale_multiplier(1.0f / 16.0f);
  const auto broken = model::load_encoder(dir, load);
  kernels::testing::set_int8_weight_scale_multiplier(1.0f);
  const auto r = model::compare_precisions(*reference, *broken, examples, model::Precision::kInt8);
  EXPECT_FALSE(r.pass);
  EXPECT_LT(r.entity_agreement, 0.99);
  EXPECT_NE(model::summarize_failures(r).find("entity agreement"), std::string::npos);

  const auto plain = check_examples(*tok, {});
  EXPECT_THROW(model::compare_precisions(*reference, *reference, plain, model::Precision::kFp32),
               Error);
  load.force_precision = false;  // int8 asked for outright: only auto's gate may prove it
  try {
    model::load_encoder(dir, load);
    ADD_FAILURE() << "GLiNER in int8 without the gate";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("--precision auto"), std::string::npos) << e.what();
  }
}

TEST(AutoPrecision, ModelSpecsTakeAPrecisionAfterAHash) {
  const auto spec = parse_model_spec("nli=org/name@v1#auto");
  EXPECT_EQ(spec.name, "nli");
  EXPECT_EQ(spec.dir, "org/name@v1");
  ASSERT_TRUE(spec.precision);
  EXPECT_TRUE(spec.precision->automatic);
  const auto bare = parse_model_spec("models/bert-tiny#bf16");
  EXPECT_EQ(bare.name, "bert-tiny");
  ASSERT_TRUE(bare.precision);
  EXPECT_EQ(bare.precision->fixed, model::Precision::kBf16);
  EXPECT_FALSE(parse_model_spec("nli=models/bert").precision);
  try {
    parse_model_spec("nli=models/bert#fp64");
    ADD_FAILURE() << "an unknown precision is refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("fp64"), std::string::npos);
  }
}

// The second start reads the verdict the first saved: reported as "cache", same choice; a
// verdict file that is not JSON, or whose key does not match, is ignored and written anew.
TEST(AutoPrecision, ASavedVerdictSkipsTheGateAndACorruptOneIsReplaced) {
  TempDir state("auto_state");
  RuntimeOptions o = auto_options(state.path());
  o.models.push_back({"nli", fixture_model("distilbert-tiny-nli")});
  const auto first = serve_once(o).at("nli");
  EXPECT_EQ(first.source, "gate");
  const VerdictCache cache(state.path());
  const auto file = cache.verdict_path(cache.key(fixture_model("distilbert-tiny-nli"), ""));
  ASSERT_TRUE(std::filesystem::exists(file));
  const std::string saved = read_text(file);
  EXPECT_EQ(nlohmann::json::parse(saved).at("chosen"), first.precision);

  std::string metrics;
  const auto second = serve_once(o, &metrics).at("nli");
  EXPECT_EQ(second.source, "cache");
  EXPECT_NE(metrics.find("onepass_model_precision{model=\"nli\",precision=\"" + first.precision +
                         "\",mode=\"auto\",source=\"cache\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_EQ(second.precision, first.precision);
  EXPECT_EQ(second.verdict, first.verdict);

  for (const std::string& bad :
       {std::string("{\"format\": 1, \"gates\": [tru"),
        std::string(saved).replace(saved.find("\"cpu\": \"") + 8, 0, "another "),
        std::string(saved).replace(saved.find("\"chosen\": \"") + 11, 4, "fp64")}) {
    SCOPED_TRACE(bad.substr(0, 60));
    std::ofstream(file) << bad;
    const auto again = serve_once(o).at("nli");
    EXPECT_EQ(again.source, "gate");
    EXPECT_EQ(again.precision, first.precision);
    EXPECT_EQ(read_text(file), saved);  // replaced by a good one
  }
}

// The key follows the bytes of the folder's files: a changed config.json misses; a file's digest
// is read back from its memo while its size and mtime hold (no rehash of the weights).
TEST(AutoPrecision, TheKeyFollowsTheFilesAndRemembersTheirDigests) {
  TempDir state("auto_state");
  TempDir model("auto_model");
  std::filesystem::copy(fixture_model("bert-tiny-nli"), model.path(),
                        std::filesystem::copy_options::recursive);
  const VerdictCache cache(state.path());
  const VerdictKey before = cache.key(model.path(), "");
  EXPECT_EQ(before.id(), cache.key(model.path(), "").id());
  EXPECT_NE(before.id(), cache.key(model.path(), "abc").id());
  EXPECT_EQ(before.cpu, cpu_signature());

  // Rewrite each memo with another digest: same size and mtime, so the key now follows the memo.
  std::size_t memos = 0;
  for (const auto& entry : std::filesystem::directory_iterator(state.path() / "file-digests")) {
    std::string size, mtime, digest;
    std::ifstream(entry.path()) >> size >> mtime >> digest;
    std::ofstream(entry.path()) << size << ' ' << mtime << ' ' << std::string(64, 'a') << '\n';
    ++memos;
  }
  EXPECT_GE(memos, 2u);  // config.json, the weights, the tokenizer's files
  EXPECT_NE(cache.key(model.path(), "").id(), before.id());

  std::filesystem::remove_all(state.path() / "file-digests");
  EXPECT_EQ(cache.key(model.path(), "").id(), before.id());
  std::ofstream(model.path() / "config.json", std::ios::app) << "\n";
  EXPECT_NE(cache.key(model.path(), "").id(), before.id());
}

// In a Hugging Face cache layout (snapshots/<commit>/FILE -> blobs/<sha256>), a blob named by a
// SHA-256 is taken at its name: the key does not read it (here its bytes differ from the name).
TEST(AutoPrecision, AHubBlobIsKeyedByItsName) {
  TempDir state("auto_state");
  TempDir hub("auto_hub");
  const auto blobs = hub.path() / "blobs";
  const auto snapshot = hub.path() / "snapshots" / "abc";
  std::filesystem::create_directories(blobs);
  std::filesystem::create_directories(snapshot);
  const std::string named(64, 'b');
  std::ofstream(blobs / named) << "not the weights whose digest names this blob";
  std::filesystem::create_symlink(blobs / named, snapshot / "model.safetensors");
  std::ofstream(snapshot / "config.json") << "{}";
  const VerdictCache cache(state.path());
  const auto key = cache.key(snapshot, "");
  const std::string listing = "config.json " + file_sha256_hex(snapshot / "config.json") +
                              "\nmodel.safetensors " + named + "\n";
  EXPECT_EQ(key.files_sha256, sha256_hex(listing));
  // A blob whose name is not a SHA-256 (a git blob id: small files) is hashed.
  const std::string git_id(40, 'c');
  std::ofstream(blobs / git_id) << "tokenizer";
  std::filesystem::create_symlink(blobs / git_id, snapshot / "vocab.txt");
  const std::string listing2 = "config.json " + file_sha256_hex(snapshot / "config.json") +
                               "\nmodel.safetensors " + named + "\nvocab.txt " +
                               sha256_hex("tokenizer") + "\n";
  EXPECT_EQ(cache.key(snapshot, "").files_sha256, sha256_hex(listing2));
}

TEST(AutoPrecision, CheckDataIsReadOrRefusedNamingTheLine) {
  TempDir dir("auto_data");
  const auto path = dir.path() / "texts.jsonl";
  std::ofstream(path) << "{\"text\": \"Der Vertrag endet.\"}\n\n"
                      << "{\"text\": \"a\", \"text_pair\": \"b\", \"labels\": [\"law\"]}\n";
  const auto texts = read_check_data(path);
  ASSERT_EQ(texts.size(), 2u);
  EXPECT_EQ(texts[0].text, "Der Vertrag endet.");
  EXPECT_FALSE(texts[0].pair);
  EXPECT_TRUE(texts[0].labels.empty());
  EXPECT_EQ(texts[1].pair, "b");
  EXPECT_EQ(texts[1].labels, std::vector<std::string>{"law"});

  const std::pair<const char*, const char*> cases[] = {
      {"{\"text\": \"ok\"}\nnot json\n", "line 2: not valid JSON"},
      {"[1, 2]\n", "line 1: expected a JSON object"},
      {"{\"label\": 1}\n", "line 1: expected \"text\""},
      {"{\"text\": \"x\", \"text_pair\": 3}\n", "line 1: \"text_pair\" must be a string"},
      {"\n\n", "holds no text"},
      {"{\"text\": \"x\", \"labels\": []}\n", "line 1: \"labels\" must be a list of 1 to"},
      {"{\"text\": \"x\", \"labels\": [\"\"]}\n", "line 1: each of \"labels\" must be"},
  };
  for (const auto& [content, message] : cases) {
    SCOPED_TRACE(content);
    std::ofstream(path) << content;
    try {
      read_check_data(path);
      ADD_FAILURE() << "refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  try {
    read_check_data(dir.path() / "missing.jsonl");
    ADD_FAILURE() << "refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
}

// The operator's texts join the built-in ones in the gate and in the key.
TEST(AutoPrecision, CheckDataJoinsTheGate) {
  TempDir state("auto_state");
  TempDir dir("auto_data");
  const auto path = dir.path() / "texts.jsonl";
  std::ofstream(path) << "{\"text\": \"Die Kündigungsfrist beträgt drei Monate.\"}\n"
                      << "{\"text\": \"Rent is due.\", \"text_pair\": \"Payment is late.\"}\n";
  RuntimeOptions o = auto_options(state.path());
  o.auto_precision_options.check_data = read_check_data(path);
  o.auto_precision_options.check_data_sha256 = file_sha256_hex(path);
  o.models.push_back({"embed", fixture_model("bert-tiny-embed")});
  const auto served = serve_once(o).at("embed");
  const std::size_t builtin = model::builtin_check_texts().size();
  EXPECT_NE(served.verdict.find(std::to_string(builtin + 2) + " inputs"), std::string::npos)
      << served.verdict;
  const VerdictCache cache(state.path());
  EXPECT_TRUE(std::filesystem::exists(cache.verdict_path(
      cache.key(fixture_model("bert-tiny-embed"), o.auto_precision_options.check_data_sha256))));
}

}  // namespace
}  // namespace onepass::runtime
