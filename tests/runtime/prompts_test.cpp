// Which prompt goes before which input (runtime/prompts.h), and the refusals that name it.
#include "runtime/prompts.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace onepass::runtime {
namespace {

ModelDescription embedder() {
  ModelDescription model;
  model.name = "e5";
  model.task = ModelTask::kEmbedder;
  model.prompts = {{"query", "query: "}, {"passage", "passage: "}};
  return model;
}

std::string refusal(const ModelDescription& model, const InferenceRequest& request,
                    const InferenceItem& item) {
  try {
    prompt_for_item(model, request, item);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  ADD_FAILURE() << "no refusal";
  return {};
}

TEST(Prompts, ANamedPromptOrTheDefault) {
  auto model = embedder();
  EXPECT_EQ(prompt_for(model, std::nullopt), "");
  EXPECT_EQ(prompt_for(model, "query"), "query: ");
  model.default_prompt = "passage: ";
  EXPECT_EQ(prompt_for(model, std::nullopt), "passage: ");
  EXPECT_EQ(prompt_for(model, "query"), "query: ");  // a named prompt wins over the default
}

TEST(Prompts, AnUnknownNameListsThePrompts) {
  const auto model = embedder();
  InferenceRequest request;
  request.prompt_name = "document";
  InferenceItem item;
  item.text = "a";
  const auto message = refusal(model, request, item);
  EXPECT_NE(message.find("'e5' has no prompt named 'document'"), std::string::npos) << message;
  EXPECT_NE(message.find("'passage' 'query'"), std::string::npos) << message;
  ModelDescription classifier;
  classifier.name = "nli";
  EXPECT_NE(refusal(classifier, request, item).find("it has no prompts"), std::string::npos);
}

TEST(Prompts, PairsAndTokenIdsTakeNoPrompt) {
  auto model = embedder();
  model.default_prompt = "query: ";
  InferenceRequest request;
  InferenceItem pair;
  pair.text = "a";
  pair.text_pair = "b";
  InferenceItem ids;
  ids.pretokenized = true;
  ids.input_ids = {101, 102};
  // The default does not reach them...
  EXPECT_EQ(prompt_for_item(model, request, pair), "");
  EXPECT_EQ(prompt_for_item(model, request, ids), "");
  // ...and a named prompt is refused.
  request.prompt_name = "query";
  EXPECT_NE(refusal(model, request, pair).find("pair"), std::string::npos);
  EXPECT_NE(refusal(model, request, ids).find("token ids"), std::string::npos);
}

TEST(Prompts, APoolingWithoutThePromptIsRefusedNotApproximated) {
  auto model = embedder();
  model.pooling_includes_prompt = false;
  InferenceRequest request;
  InferenceItem item;
  item.text = "a";
  EXPECT_EQ(prompt_for_item(model, request, item), "");  // no prompt: served as ever
  request.prompt_name = "query";
  EXPECT_NE(refusal(model, request, item).find("include_prompt"), std::string::npos);
}

}  // namespace
}  // namespace onepass::runtime
