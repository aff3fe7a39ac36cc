// sentence-transformers' prompts ("query: ", "passage: ", ...): the text an embedding model
// expects before each input, chosen by name per request (TEI's prompt_name) or by default.
// Like the library and TEI, the prompt is joined to the text before tokenizing, so its tokens
// count toward the model's limit and are part of the pooled embedding.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runtime/service.h"

namespace onepass::runtime {

// The prompt before a single text of a request that names `prompt_name` (nullopt: the model's
// default prompt); empty when none applies. Throws onepass::Error kInvalidInput when the model
// has no prompt by that name (the message lists those it has) or when its pooling leaves prompt
// tokens out (1_Pooling include_prompt false), which onepass does not do.
std::string_view prompt_for(const ModelDescription& model,
                            const std::optional<std::string>& prompt_name);

// `prompt` joined before `text`, as sentence-transformers joins them: `text` itself when the
// prompt is empty, else the two written into `storage`.
std::string_view with_prompt(std::string_view prompt, std::string_view text, std::string& storage);

// The model's prompt names, each quoted and after a space (" 'passage' 'query'"); empty when it
// has none. For the messages that list them.
std::string quoted_prompt_names(const ModelDescription& model);

// The prompt before `item`'s text in `request`: prompt_for for a single text; none for a pair of
// texts or token ids, where a named prompt is refused (kInvalidInput) as TEI refuses it: a prompt
// belongs to one text, and ids are already tokenized.
std::string_view prompt_for_item(const ModelDescription& model, const InferenceRequest& request,
                                 const InferenceItem& item);

}  // namespace onepass::runtime
