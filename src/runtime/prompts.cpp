#include "runtime/prompts.h"

#include "base/client_text.h"
#include "base/error.h"

namespace onepass::runtime {

std::string_view prompt_for(const ModelDescription& model,
                            const std::optional<std::string>& prompt_name) {
  std::string_view prompt;
  if (prompt_name) {
    auto it = model.prompts.find(*prompt_name);
    if (it == model.prompts.end()) {
      // The name is the client's: quoted as a short, escaped prefix.
      std::string message =
          "model '" + model.name + "' has no prompt named " + quote_client_text(*prompt_name);
      if (model.prompts.empty()) {
        message.append("; it has no prompts (config_sentence_transformers.json)");
      } else {
        message.append("; its prompts:").append(quoted_prompt_names(model));
      }
      throw Error(ErrorKind::kInvalidInput, message);
    }
    prompt = it->second;
  } else if (model.default_prompt) {
    prompt = *model.default_prompt;
  }
  if (!prompt.empty() && !model.pooling_includes_prompt) {
    // sentence-transformers would pool without the prompt's tokens; serving it with them would
    // give embeddings the model was not trained to compare.
    throw Error(ErrorKind::kInvalidInput,
                "model '" + model.name +
                    "' pools without its prompt's tokens (1_Pooling include_prompt false), "
                    "which onepass does not support; send the text without a prompt");
  }
  return prompt;
}

std::string_view with_prompt(std::string_view prompt, std::string_view text, std::string& storage) {
  if (prompt.empty()) return text;
  storage.clear();
  storage.reserve(prompt.size() + text.size());
  storage.append(prompt).append(text);
  return storage;
}

std::string quoted_prompt_names(const ModelDescription& model) {
  std::string names;
  for (const auto& [name, text] : model.prompts) names.append(" '").append(name).append("'");
  return names;
}

std::string_view prompt_for_item(const ModelDescription& model, const InferenceRequest& request,
                                 const InferenceItem& item) {
  if (item.pretokenized || item.text_pair) {
    if (request.prompt_name) {
      throw Error(ErrorKind::kInvalidInput, item.pretokenized
                                                ? "prompt_name applies to texts, not to token ids"
                                                : "prompt_name cannot be set with a pair of texts");
    }
    return {};
  }
  return prompt_for(model, request.prompt_name);
}

}  // namespace onepass::runtime
