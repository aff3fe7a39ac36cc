// `onepass info`: what this build is and what it can run.
#include <cstdio>

#include "apps/onepass/command.h"

namespace onepass::app {
namespace {

CommandRegistration registration{Command{
    "info", "Print the build, the supported architectures and tokenizer sources",
    [](CLI::App& sub) -> std::function<int()> {
      (void)sub;
      return [] {
        std::printf("onepass 0.1.0\n");
        std::printf(
            "architectures: BertModel BertForSequenceClassification XLMRobertaModel "
            "XLMRobertaForSequenceClassification RobertaModel "
            "RobertaForSequenceClassification DebertaV2Model "
            "DebertaV2ForSequenceClassification\n");
        std::printf("tokenizers: tokenizer.json, SentencePiece (.model), WordPiece (vocab.txt)\n");
        return 0;
      };
    }}};

}  // namespace
}  // namespace onepass::app
