// Each dialect's request (route, headers, body) and response parsing, against the wire shapes in
// docs/api.md and the upstream servers' documentation.
#include "bench/dialect.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "protowire/wire.h"

namespace onepass::bench {
namespace {

using nlohmann::json;

const Sample kPair{"A man plays.", std::string("Someone makes music."), std::string("entailment")};
const Sample kSingle{"Hello world", std::nullopt, std::nullopt};

http::Response ok(const std::string& body) { return {200, {}, body}; }

json body_of(const http::Request& r) { return json::parse(r.body); }

std::string header(const http::Request& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST(SageMakerDialect, ItemsOfAClientBatchInOneInvocation) {
  DialectOptions options;
  options.headers.emplace_back("X-Amzn-SageMaker-Target-Model", "nli.tar.gz");
  const auto d = make_dialect("onepass", options);
  const Sample* batch[] = {&kPair, &kSingle};
  const auto r = d->build(batch, Task::kClassify);
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.target, "/invocations");
  EXPECT_EQ(header(r, "Content-Type"), "application/json");
  EXPECT_EQ(header(r, "X-Amzn-SageMaker-Target-Model"), "nli.tar.gz");
  EXPECT_EQ(body_of(r), json::parse(R"({"inputs":[{"text":"A man plays.","text_pair":
      "Someone makes music."},"Hello world"],"parameters":{"truncation":true}})"));
  // Asking an embedder: strings only.
  EXPECT_EQ(body_of(d->build(batch, Task::kEmbed))["inputs"],
            json::parse(R"(["A man plays.","Hello world"])"));

  const auto answers = d->parse(ok(R"([{"label":"entailment","score":0.75},
      {"label":"neutral","score":0.5}])"),
                                2, Task::kClassify);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].label, "entailment");
  EXPECT_DOUBLE_EQ(answers[0].score, 0.75);
  EXPECT_EQ(answers[1].label, "neutral");
  // One input may come back unwrapped; an embedder answers token-level vectors.
  EXPECT_EQ(d->parse(ok(R"({"label":"x","score":1})"), 1, Task::kClassify)[0].label, "x");
  const auto emb = d->parse(ok("[[[1,2],[3,4]]]"), 1, Task::kClassify);
  EXPECT_EQ(emb[0].values, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_TRUE(emb[0].label.empty());
  EXPECT_THROW(d->parse(ok(R"([{"label":"x","score":1}])"), 2, Task::kClassify), Error);
  EXPECT_THROW(d->parse(ok("not json"), 1, Task::kClassify), Error);
}

TEST(SageMakerDialect, PadToMaxAsksForTheMaxLength) {
  DialectOptions options;
  options.pad_to_max = true;
  options.max_len = 128;
  const Sample* batch[] = {&kSingle};
  const auto r = make_dialect("hf", options)->build(batch, Task::kClassify);
  EXPECT_EQ(body_of(r)["parameters"], json::parse(R"({"truncation":true,"max_length":128})"));
}

TEST(TeiDialect, PredictTakesListsOfListsAndEmbedTakesStrings) {
  const auto d = make_dialect("tei", {});
  const Sample* batch[] = {&kPair, &kSingle};
  const auto predict = d->build(batch, Task::kClassify);
  EXPECT_EQ(predict.target, "/predict");
  EXPECT_EQ(body_of(predict)["inputs"],
            json::parse(R"([["A man plays.","Someone makes music."],["Hello world"]])"));
  EXPECT_EQ(body_of(predict)["truncate"], true);
  const auto embed = d->build(batch, Task::kEmbed);
  EXPECT_EQ(embed.target, "/embed");
  EXPECT_EQ(body_of(embed)["inputs"], json::parse(R"(["A man plays.","Hello world"])"));

  const auto answers = d->parse(ok(R"([[{"score":0.7,"label":"neutral"},{"score":0.2,
      "label":"entailment"},{"score":0.1,"label":"contradiction"}],[{"score":0.9,"label":
      "contradiction"},{"score":0.05,"label":"entailment"},{"score":0.05,"label":"neutral"}]])"),
                                2, Task::kClassify);
  EXPECT_EQ(answers[0].label, "neutral");
  EXPECT_FLOAT_EQ(answers[0].score, 0.7);
  // Every score is kept, in label-name order: contradiction, entailment, neutral.
  EXPECT_EQ(answers[0].values, (std::vector<float>{0.1f, 0.2f, 0.7f}));
  EXPECT_EQ(answers[1].label, "contradiction");
  const auto single = d->parse(ok(R"([{"score":1,"label":"a"}])"), 1, Task::kClassify);
  EXPECT_EQ(single[0].label, "a");
  const auto vectors = d->parse(ok("[[0.5,0.5],[1,0]]"), 2, Task::kEmbed);
  EXPECT_EQ(vectors[1].values, (std::vector<float>{1, 0}));
  EXPECT_THROW(d->parse(ok("[[0.5,0.5]]"), 2, Task::kEmbed), Error);
}

TEST(KServeDialect, TextTensorsWhenNoTokenizer) {
  DialectOptions options;
  options.model = "nli";
  options.label_names = {"contradiction", "entailment", "neutral"};
  const auto d = make_dialect("triton", options);
  const Sample* batch[] = {&kPair, &kSingle};
  const auto r = d->build(batch, Task::kClassify);
  EXPECT_EQ(r.target, "/v2/models/nli/infer");
  EXPECT_EQ(body_of(r), json::parse(R"({"inputs":[
      {"name":"text","shape":[2],"datatype":"BYTES","data":["A man plays.","Hello world"]},
      {"name":"text_pair","shape":[2],"datatype":"BYTES","data":["Someone makes music.",""]}]})"));
  const auto answers = d->parse(ok(R"({"model_name":"nli","outputs":[{"name":"logits",
      "shape":[2,3],"datatype":"FP32","data":[0,2,0, 1,0,0]}]})"),
                                2, Task::kClassify);
  EXPECT_EQ(answers[0].label, "entailment");
  EXPECT_NEAR(answers[0].score, std::exp(2.0) / (std::exp(2.0) + 2), 1e-6);
  EXPECT_EQ(answers[1].label, "contradiction");
  EXPECT_TRUE(answers[1].label_named);
  EXPECT_THROW(make_dialect("triton", {})->build(batch, Task::kClassify), Error);  // no model
  // Without id2label the label is only an index: kept for verification, not for accuracy.
  DialectOptions unnamed;
  unnamed.model = "nli";
  const auto index_only =
      make_dialect("triton", unnamed)
          ->parse(
              ok(R"({"outputs":[{"name":"logits","shape":[1,3],"datatype":"FP32","data":[0,2,0]}]})"),
              1, Task::kClassify);
  EXPECT_EQ(index_only[0].label, "LABEL_1");
  EXPECT_FALSE(index_only[0].label_named);
}

TEST(KServeDialect, TokenizedTensorsPaddedToTheLongestOrToMaxLen) {
  DialectOptions options;
  options.model = "m";
  options.pad_id = 0;
  options.tokenize = [](const Sample& s, std::size_t) {
    TokenizedInput t;
    for (std::size_t i = 0; i < (s.text_pair ? 4u : 2u); ++i) {
      t.ids.push_back(static_cast<std::int64_t>(10 + i));
      t.type_ids.push_back(i >= 2 ? 1 : 0);
    }
    return t;
  };
  const Sample* batch[] = {&kPair, &kSingle};
  const json inputs =
      body_of(make_dialect("triton", options)->build(batch, Task::kClassify))["inputs"];
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(inputs[0], json::parse(R"({"name":"input_ids","shape":[2,4],"datatype":"INT64",
      "data":[10,11,12,13,10,11,0,0]})"));
  EXPECT_EQ(inputs[1]["data"], json::parse("[1,1,1,1,1,1,0,0]"));
  EXPECT_EQ(inputs[2]["name"], "token_type_ids");
  EXPECT_EQ(inputs[2]["data"], json::parse("[0,0,1,1,0,0,0,0]"));
  options.pad_to_max = true;
  options.max_len = 6;
  const json padded =
      body_of(make_dialect("triton", options)->build(batch, Task::kClassify))["inputs"];
  EXPECT_EQ(padded[0]["shape"], json::parse("[2,6]"));
  EXPECT_EQ(padded[1]["data"], json::parse("[1,1,1,1,0,0,1,1,0,0,0,0]"));
}

TEST(KServeDialect, EmbeddingsOutput) {
  DialectOptions options;
  options.model = "e";
  const auto answers = make_dialect("triton", options)
                           ->parse(ok(R"({"outputs":[{"name":"embeddings","shape":[2,2],
                               "datatype":"FP32","data":[[1,2],[3,4]]}]})"),
                                   2, Task::kClassify);
  EXPECT_TRUE(answers[0].label.empty());
  EXPECT_EQ(answers[1].values, (std::vector<float>{3, 4}));
}

TEST(OpenAiDialect, EmbeddingsOrderedByIndex) {
  DialectOptions options;
  options.model = "embed";
  const auto d = make_dialect("openai", options);
  EXPECT_EQ(d->tasks(), std::vector<Task>{Task::kEmbed});
  const Sample* batch[] = {&kPair, &kSingle};
  const auto r = d->build(batch, Task::kEmbed);
  EXPECT_EQ(r.target, "/v1/embeddings");
  EXPECT_EQ(body_of(r), json::parse(R"({"input":["A man plays.","Hello world"],"model":"embed",
      "encoding_format":"float"})"));
  const auto answers = d->parse(ok(R"({"object":"list","data":[{"object":"embedding","index":1,
      "embedding":[0,1]},{"object":"embedding","index":0,"embedding":[1,0]}]})"),
                                2, Task::kEmbed);
  EXPECT_EQ(answers[0].values, (std::vector<float>{1, 0}));
  EXPECT_EQ(answers[1].values, (std::vector<float>{0, 1}));
  EXPECT_THROW(d->parse(ok(R"({"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]})"),
                        2, Task::kEmbed),
               Error);
}

TEST(VllmDialect, ClassifyJoinsAPairAndReadsProbs) {
  DialectOptions options;
  options.model = "nli";
  const auto d = make_dialect("vllm", options);
  const Sample* batch[] = {&kPair};
  const auto r = d->build(batch, Task::kClassify);
  EXPECT_EQ(r.target, "/classify");
  EXPECT_EQ(body_of(r), json::parse(R"({"input":["A man plays.\nSomeone makes music."],
      "model":"nli"})"));
  const auto answers = d->parse(ok(R"({"data":[{"index":0,"label":"neutral","probs":[0.1,0.2,0.7],
      "num_classes":3}]})"),
                                1, Task::kClassify);
  EXPECT_EQ(answers[0].label, "neutral");
  EXPECT_FLOAT_EQ(answers[0].score, 0.7);
  EXPECT_EQ(d->build(batch, Task::kEmbed).target, "/v1/embeddings");
}

// Open-label extraction: gliner.serve's {"text","labels"} at /extract with the batch's texts as
// a list, one {"entities"} object back per text; a batch carries one label set.
TEST(SageMakerDialect, ExtractSendsTheBatchsTextsWithTheirLabels) {
  const auto d = make_dialect("onepass", {});
  Sample drug{"Aspirin was taken in Paris.", std::nullopt, std::nullopt, {"drug", "city"}};
  Sample other_drug{"Ibuprofen.", std::nullopt, std::nullopt, {"drug", "city"}};
  const Sample* batch[] = {&drug, &other_drug};
  const auto r = d->build(batch, Task::kExtract);
  EXPECT_EQ(r.target, "/extract");
  EXPECT_EQ(body_of(r), json::parse(R"({"text":["Aspirin was taken in Paris.","Ibuprofen."],
      "labels":["drug","city"]})"));
  // A sample that names no labels asks for the default ones.
  const Sample* plain[] = {&kSingle};
  EXPECT_EQ(body_of(d->build(plain, Task::kExtract))["labels"], json(default_extract_labels()));
  const Sample* mixed[] = {&drug, &kSingle};
  EXPECT_THROW(d->build(mixed, Task::kExtract), Error);

  const auto answers = d->parse(ok(R"([{"entities":[{"start":0,"end":7,"text":"Aspirin",
      "label":"drug","score":0.5},{"start":21,"end":26,"text":"Paris","label":"city",
      "score":0.75}]},{"entities":[]}])"),
                                2, Task::kExtract);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].label, "entities: drug[0,7) city[21,26)");
  EXPECT_EQ(answers[0].values, (std::vector<float>{0.5f, 0.75f}));
  EXPECT_DOUBLE_EQ(answers[0].score, 0.625);
  EXPECT_FALSE(answers[0].label_named);
  EXPECT_EQ(answers[1].label, "entities:");
  EXPECT_THROW(d->parse(ok(R"({"entities":[]})"), 1, Task::kExtract), Error);  // not a list
  EXPECT_THROW(d->parse(ok(R"([{"entities":[]}])"), 2, Task::kExtract), Error);
  EXPECT_THROW(d->parse(ok(R"([{"label":"x"}])"), 1, Task::kExtract), Error);
}

// Token classification: the pipeline's entities with aggregation_strategy "simple", one list per
// input; an answer names every entity's group and span, so batched answers must match exactly.
TEST(SageMakerDialect, TokensAskForSimpleEntitiesAndReadOneListPerInput) {
  const auto d = make_dialect("onepass", {});
  EXPECT_EQ(d->tasks(), (std::vector<Task>{Task::kClassify, Task::kEmbed, Task::kTokens,
                                           Task::kQuestion, Task::kExtract}));
  EXPECT_EQ(make_dialect("hf", {})->tasks(),
            (std::vector<Task>{Task::kClassify, Task::kEmbed, Task::kTokens, Task::kQuestion}));
  const Sample* batch[] = {&kPair, &kSingle};
  const auto r = d->build(batch, Task::kTokens);
  EXPECT_EQ(r.target, "/invocations");
  EXPECT_EQ(body_of(r), json::parse(R"({"inputs":["A man plays.\nSomeone makes music.",
      "Hello world"],"parameters":{"truncation":true,"aggregation_strategy":"simple"}})"));
  const auto answers = d->parse(ok(R"([[{"entity_group":"PER","score":0.5,"word":"A man",
      "start":0,"end":5},{"entity_group":"LOC","score":0.75,"word":"music","start":28,"end":33}],
      []])"),
                                2, Task::kTokens);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].label, "entities: PER[0,5) LOC[28,33)");
  EXPECT_EQ(answers[0].values, (std::vector<float>{0.5f, 0.75f}));
  EXPECT_DOUBLE_EQ(answers[0].score, 0.625);
  EXPECT_FALSE(answers[0].label_named);
  EXPECT_EQ(answers[1].label, "entities:");  // no entity is an answer too
  EXPECT_TRUE(answers[1].values.empty());
  // aggregation_strategy none names the tag "entity".
  EXPECT_EQ(d->parse(ok(R"([[{"entity":"B-PER","score":0.5,"index":1,"word":"A","start":0,
      "end":1}]])"),
                     1, Task::kTokens)[0]
                .label,
            "entities: B-PER[0,1)");
  EXPECT_THROW(d->parse(ok(R"([[{"label":"x","score":1}]])"), 1, Task::kTokens), Error);
  EXPECT_THROW(d->parse(ok(R"([[]])"), 2, Task::kTokens), Error);
  EXPECT_THROW(
      d->parse(ok(R"([{"entity_group":"PER","score":1,"start":0,"end":1}])"), 1, Task::kTokens),
      Error);
  // Entities are neither a classification nor an embedding, so auto-detection moves on.
  EXPECT_THROW(
      d->parse(ok(R"([[{"entity_group":"PER","score":1,"start":0,"end":1}]])"), 1, Task::kClassify),
      Error);
  EXPECT_THROW(d->parse(ok("[[]]"), 1, Task::kEmbed), Error);
}

// Question answering: a pair's text_pair is asked about its text (a single text gets the fixed
// question), no truncation; an answer is its span and score.
TEST(SageMakerDialect, QuestionsAskAboutTheTextAndReadOneAnswerPerInput) {
  const auto d = make_dialect("hf", {});
  const Sample* batch[] = {&kPair, &kSingle};
  const auto r = d->build(batch, Task::kQuestion);
  EXPECT_EQ(r.target, "/invocations");
  EXPECT_EQ(body_of(r), json::parse(R"({"inputs":[
      {"question":"Someone makes music.","context":"A man plays."},
      {"question":"What is this text about?","context":"Hello world"}]})"));
  const auto answers = d->parse(ok(R"([{"score":0.25,"start":2,"end":5,"answer":"man"},
      [{"score":0.5,"start":0,"end":5,"answer":"Hello"},{"score":0.1,"start":6,"end":11,
      "answer":"world"}]])"),
                                2, Task::kQuestion);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].label, "answer[2,5)");
  EXPECT_DOUBLE_EQ(answers[0].score, 0.25);
  EXPECT_FALSE(answers[0].label_named);
  EXPECT_EQ(answers[1].label, "answer[0,5)");  // a top_k list: the best answer
  EXPECT_THROW(d->parse(ok(R"([{"score":1,"start":0,"end":1,"answer":"a"}])"), 2, Task::kQuestion),
               Error);
  EXPECT_THROW(d->parse(ok(R"([{"label":"x","score":1}])"), 1, Task::kQuestion), Error);
  // The pipeline answers a list of one as its one input: a bare answer for a batch of one.
  EXPECT_EQ(
      d->parse(ok(R"({"score":1,"start":0,"end":1,"answer":"a"})"), 1, Task::kQuestion)[0].label,
      "answer[0,1)");
  EXPECT_THROW(d->parse(ok(R"({"score":1,"start":0,"end":1,"answer":"a"})"), 2, Task::kQuestion),
               Error);
}

// SPLADE: /embed_sparse with strings; each answer's {index, value} entries read as a dense vector
// up to its last index, so answers with other entries differ.
TEST(TeiDialect, EmbedSparseReadsIndexValueLists) {
  const auto d = make_dialect("tei", {});
  const Sample* batch[] = {&kSingle, &kPair};
  const auto r = d->build(batch, Task::kSparse);
  EXPECT_EQ(r.target, "/embed_sparse");
  EXPECT_EQ(body_of(r),
            json::parse(R"({"inputs":["Hello world","A man plays."],"truncate":true})"));
  const auto answers =
      d->parse(ok(R"([[{"index":1,"value":0.5},{"index":4,"value":2}],[]])"), 2, Task::kSparse);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].values, (std::vector<float>{0.0f, 0.5f, 0.0f, 0.0f, 2.0f}));
  EXPECT_TRUE(answers[0].label.empty());
  EXPECT_TRUE(answers[1].values.empty());
  EXPECT_THROW(d->parse(ok(R"([[{"index":-1,"value":1}]])"), 1, Task::kSparse), Error);
  EXPECT_THROW(d->parse(ok(R"([[{"index":1}]])"), 1, Task::kSparse), Error);
  EXPECT_THROW(d->parse(ok(R"([[1,2]])"), 1, Task::kSparse), Error);
  EXPECT_THROW(d->parse(ok(R"([[{"index":99999999,"value":1}]])"), 1, Task::kSparse), Error);
}

TEST(TeiDialect, PredictTokensAsksForSimpleEntities) {
  const auto d = make_dialect("tei", {});
  EXPECT_EQ(d->tasks(),
            (std::vector<Task>{Task::kClassify, Task::kEmbed, Task::kTokens, Task::kSparse}));
  const Sample* batch[] = {&kSingle, &kPair};
  const auto r = d->build(batch, Task::kTokens);
  EXPECT_EQ(r.target, "/predict_tokens");
  EXPECT_EQ(body_of(r), json::parse(R"({"inputs":["Hello world",
      "A man plays.\nSomeone makes music."],"aggregation_strategy":"simple","truncate":true})"));
  const auto answers =
      d->parse(ok(R"([[{"entity_group":"LOC","score":0.25,"word":"world","start":6,"end":11}],
      []])"),
               2, Task::kTokens);
  EXPECT_EQ(answers[0].label, "entities: LOC[6,11)");
  EXPECT_EQ(answers[1].label, "entities:");
  EXPECT_THROW(d->parse(ok("[[]]"), 2, Task::kTokens), Error);
}

TEST(CohereDialect, DocumentsAgainstOneQueryAnsweredByIndex) {
  DialectOptions options;
  options.model = "rerank";
  const auto d = make_dialect("cohere", options);
  EXPECT_EQ(d->tasks(), std::vector<Task>{Task::kClassify});
  const Sample* batch[] = {&kPair, &kSingle};
  const auto r = d->build(batch, Task::kClassify);
  EXPECT_EQ(r.target, "/v2/rerank");
  EXPECT_EQ(body_of(r), json::parse(R"({"query":"what is this text about","model":"rerank",
      "documents":["A man plays.\nSomeone makes music.","Hello world"]})"));
  // Results come sorted by score; answers go back to the documents' order.
  const auto answers = d->parse(ok(R"({"id":"x","results":[{"index":1,"relevance_score":0.9},
      {"index":0,"relevance_score":0.25}],"meta":{"api_version":{"version":"2"}}})"),
                                2, Task::kClassify);
  EXPECT_DOUBLE_EQ(answers[0].score, 0.25);
  EXPECT_DOUBLE_EQ(answers[1].score, 0.9);
  EXPECT_FALSE(answers[0].label_named);
  EXPECT_EQ(answers[1].values, (std::vector<float>{0.9f}));
  EXPECT_THROW(
      d->parse(ok(R"({"results":[{"index":0,"relevance_score":0.1}]})"), 2, Task::kClassify),
      Error);
  EXPECT_THROW(d->parse(ok(R"({"results":[{"index":0,"relevance_score":0.1},
      {"index":0,"relevance_score":0.2}]})"),
                        2, Task::kClassify),
               Error);
}

// --- the gRPC dialects: their messages read back field by field --------------------------

// Every length-delimited occurrence of `field` in `message`, in order.
std::vector<std::string> fields(std::string_view message, std::uint32_t field) {
  std::vector<std::string> out;
  protowire::Reader r(message);
  while (r.next()) {
    if (r.field() == field && r.type() == protowire::WireType::kLength) {
      out.emplace_back(r.bytes());
    } else {
      r.skip();
    }
  }
  return out;
}

std::string le_floats(const std::vector<float>& values) {
  protowire::Writer w;
  w.packed_floats(1, values);
  return fields(w.data(), 1).front();  // the run without its tag and length
}

TEST(KServeGrpcDialect, ModelInferCarriesTextTensorsInRawContents) {
  DialectOptions options;
  options.model = "nli";
  options.label_names = {"entailment", "neutral", "contradiction"};
  const auto d = make_dialect("kserve-grpc", options);
  EXPECT_EQ(d->protocol(), Protocol::kGrpc);
  const Sample* batch[] = {&kPair, &kSingle};
  const GrpcRequest r = d->build_grpc(batch, Task::kClassify);
  EXPECT_EQ(r.method, "/inference.GRPCInferenceService/ModelInfer");
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(fields(r.messages[0], 1), std::vector<std::string>{"nli"});
  const auto inputs = fields(r.messages[0], 5);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(fields(inputs[0], 1), std::vector<std::string>{"text"});
  EXPECT_EQ(fields(inputs[0], 2), std::vector<std::string>{"BYTES"});
  EXPECT_EQ(fields(inputs[1], 1), std::vector<std::string>{"text_pair"});
  const auto raw = fields(r.messages[0], 7);
  ASSERT_EQ(raw.size(), 2u);
  // Each element: its 4-byte little-endian length, then its bytes; a single text's pair is "".
  EXPECT_EQ(raw[0], std::string("\x0c\0\0\0", 4) + "A man plays." + std::string("\x0b\0\0\0", 4) +
                        "Hello world");
  EXPECT_EQ(raw[1],
            std::string("\x14\0\0\0", 4) + "Someone makes music." + std::string("\0\0\0\0", 4));
  EXPECT_THROW(d->build(batch, Task::kClassify), Error);  // no HTTP form

  // logits [2, 3] in raw_output_contents: read as probabilities, named by label_names.
  protowire::Writer out, tensor;
  tensor.bytes_field(1, "logits");
  tensor.bytes_field(2, "FP32");
  tensor.packed_varints(3, {2, 3});
  out.bytes_field(5, tensor.data());
  out.bytes_field(6, le_floats({0.0f, 2.0f, 0.0f, 3.0f, 0.0f, 0.0f}));
  const auto answers = d->parse_grpc({out.data()}, 2, Task::kClassify);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].label, "neutral");
  EXPECT_EQ(answers[1].label, "entailment");
  EXPECT_NEAR(answers[1].score, std::exp(3.0) / (std::exp(3.0) + 2), 1e-6);
  EXPECT_THROW(d->parse_grpc({out.data()}, 4, Task::kClassify), Error);   // 6 values, 4 inputs
  EXPECT_THROW(d->parse_grpc({"\x0a\x05m"}, 2, Task::kClassify), Error);  // cut short

  // The same values in contents.fp32_contents, one embeddings output.
  protowire::Writer emb, emb_tensor, contents;
  contents.packed_floats(6, {0.5f, -1.0f, 0.25f, 2.0f});
  emb_tensor.bytes_field(1, "embeddings");
  emb_tensor.bytes_field(2, "FP32");
  emb_tensor.bytes_field(5, contents.data());
  emb.bytes_field(5, emb_tensor.data());
  const auto vectors = d->parse_grpc({emb.data()}, 2, Task::kClassify);
  EXPECT_EQ(vectors[0].values, (std::vector<float>{0.5f, -1.0f}));
  EXPECT_EQ(vectors[1].values, (std::vector<float>{0.25f, 2.0f}));
  EXPECT_TRUE(vectors[1].label.empty());

  DialectOptions nameless;
  EXPECT_THROW(make_dialect("kserve-grpc", nameless)->build_grpc(batch, Task::kClassify), Error);
}

TEST(TeiGrpcDialect, OneInputIsUnaryAndABatchIsAStreamInOrder) {
  const auto d = make_dialect("tei-grpc", {});
  const Sample* one[] = {&kSingle};
  GrpcRequest r = d->build_grpc(one, Task::kClassify);
  EXPECT_EQ(r.method, "/tei.v1.Predict/Predict");
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(fields(r.messages[0], 1), std::vector<std::string>{"Hello world"});
  const Sample* pairs[] = {&kPair, &kPair, &kPair};
  r = d->build_grpc(pairs, Task::kClassify);
  EXPECT_EQ(r.method, "/tei.v1.Predict/PredictPairStream");
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(fields(r.messages[0], 1),
            (std::vector<std::string>{"A man plays.", "Someone makes music."}));
  // One stream, one message type: pairs and single texts cannot share a batch.
  const Sample* mixed[] = {&kPair, &kSingle};
  EXPECT_THROW(d->build_grpc(mixed, Task::kClassify), Error);
  r = d->build_grpc(pairs, Task::kEmbed);
  EXPECT_EQ(r.method, "/tei.v1.Embed/EmbedStream");
  EXPECT_EQ(fields(r.messages[0], 1),
            std::vector<std::string>{"A man plays.\nSomeone makes music."});
  EXPECT_EQ(d->build_grpc(one, Task::kSparse).method, "/tei.v1.Embed/EmbedSparse");
  EXPECT_THROW(d->build_grpc(one, Task::kTokens), Error);

  // PredictResponse{predictions: {score, label}...}: the top label, every score by label name.
  auto prediction = [](float score, const std::string& label) {
    protowire::Writer p;
    std::uint32_t bits = 0;
    std::memcpy(&bits, &score, 4);
    std::string fixed = {'\x0d', static_cast<char>(bits & 0xff),
                         static_cast<char>((bits >> 8) & 0xff),
                         static_cast<char>((bits >> 16) & 0xff), static_cast<char>(bits >> 24)};
    p.bytes_field(2, label);
    return fixed + p.data();
  };
  protowire::Writer a, b;
  a.bytes_field(1, prediction(0.75f, "neutral"));
  a.bytes_field(1, prediction(0.25f, "entailment"));
  b.bytes_field(1, prediction(0.125f, "neutral"));
  b.bytes_field(1, prediction(0.875f, "entailment"));
  const auto answers = d->parse_grpc({a.data(), b.data()}, 2, Task::kClassify);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].label, "neutral");
  EXPECT_FLOAT_EQ(answers[0].score, 0.75f);
  EXPECT_EQ(answers[1].label, "entailment");
  EXPECT_EQ(answers[1].values, (std::vector<float>{0.875f, 0.125f}));  // entailment, neutral
  EXPECT_THROW(d->parse_grpc({a.data()}, 2, Task::kClassify), Error);  // one answer for two

  // EmbedResponse{embeddings} and EmbedSparseResponse{sparse_embeddings: {index, value}}.
  protowire::Writer e;
  e.packed_floats(1, {1.0f, -2.0f});
  EXPECT_EQ(d->parse_grpc({e.data()}, 1, Task::kEmbed)[0].values,
            (std::vector<float>{1.0f, -2.0f}));
  protowire::Writer sparse, entry;
  entry.varint_field(1, 3);
  const float v = 0.5f;
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, 4);
  std::string value = {'\x15', static_cast<char>(bits & 0xff),
                       static_cast<char>((bits >> 8) & 0xff),
                       static_cast<char>((bits >> 16) & 0xff), static_cast<char>(bits >> 24)};
  sparse.bytes_field(1, entry.data() + value);
  EXPECT_EQ(d->parse_grpc({sparse.data()}, 1, Task::kSparse)[0].values,
            (std::vector<float>{0, 0, 0, 0.5f}));
}

TEST(Dialects, UnknownNameIsAnArgumentError) {
  EXPECT_THROW(make_dialect("grpc", {}), Error);
  EXPECT_EQ(dialect_names().size(), 10u);
}

}  // namespace
}  // namespace onepass::bench
