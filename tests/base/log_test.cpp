// The logging facade's rules: secrets and bodies never reach a line, every JSON line parses
// whatever bytes a client sent, and request ids are kept only when safe.
#include "base/log.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace onepass::log {
namespace {

const auto kTime = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764628800123));

TEST(Log, TextAndJsonLines) {
  Fields fields;
  fields.add("route", "/invocations").add("status", 200).add("ok", true).add("model", "a b");
  EXPECT_EQ(render(Format::kText, Level::kInfo, "request", fields, kTime),
            "2025-12-01T22:40:00.123Z info request route=/invocations status=200 ok=true "
            "model=\"a b\"");
  EXPECT_EQ(render(Format::kJson, Level::kWarn, "request", fields, kTime),
            "{\"ts\":\"2025-12-01T22:40:00.123Z\",\"level\":\"warn\",\"event\":\"request\","
            "\"route\":\"/invocations\",\"status\":200,\"ok\":true,\"model\":\"a b\"}");
}

TEST(Log, JsonEscapesControlQuotesAndInvalidUtf8) {
  Fields fields;
  fields.add("path", std::string("/a\"b\\c\nd\x01\xff\xc3\xa9", 12));
  EXPECT_EQ(render(Format::kJson, Level::kInfo, "e", fields, kTime),
            "{\"ts\":\"2025-12-01T22:40:00.123Z\",\"level\":\"info\",\"event\":\"e\","
            "\"path\":\"/a\\\"b\\\\c\\u000ad\\u0001\\ufffd\xc3\xa9\"}");
  // A newline in text mode cannot start a forged line either.
  const std::string text = render(Format::kText, Level::kInfo, "e", fields, kTime);
  EXPECT_EQ(text.find('\n'), std::string::npos);
}

TEST(Log, SecretFieldsAndValuesAreRedacted) {
  for (const char* key : {"api_key", "authorization", "Authorization", "hf_token", "token",
                          "HF_API_TOKEN", "password", "client_secret", "body", "request_body"})
    EXPECT_TRUE(is_secret_key(key)) << key;
  for (const char* key : {"tokens", "route", "model", "status", "request_id", "max_batch_tokens"})
    EXPECT_FALSE(is_secret_key(key)) << key;

  Fields fields;
  fields.add("api_key", "s3cret-key")
      .add("hf_token", "hf_abcdefghijklmnopqrstuvwxyz")
      .add("body", "{\"inputs\":\"private text\"}")
      .add("model_id", "org/model")
      .add("header", "Bearer abc.def")
      .add("url", "https://x/?t=hf_ABCDEFGHIJKLMNOPQRSTUVWX123")
      .add("tokens", 12);
  for (const Format format : {Format::kText, Format::kJson}) {
    const std::string line = render(format, Level::kInfo, "start", fields, kTime);
    for (const char* secret : {"s3cret", "hf_abcdef", "private text", "abc.def", "hf_ABCDEF"})
      EXPECT_EQ(line.find(secret), std::string::npos) << secret << " in " << line;
    EXPECT_NE(line.find("org/model"), std::string::npos);
    EXPECT_NE(line.find("12"), std::string::npos);
  }
}

TEST(Log, RequestIdKeptOnlyWhenSafe) {
  const std::string good = "abc-123_X.y:z";
  EXPECT_EQ(request_id_from(&good), good);
  std::vector<std::string> bad_ids = {"", "has space", "new\nline", "q\"uote"};
  bad_ids.emplace_back(129, 'a');
  for (const std::string& bad : bad_ids) {
    const std::string id = request_id_from(&bad);
    EXPECT_NE(id, bad);
    EXPECT_EQ(id.size(), 32u);
    EXPECT_TRUE(valid_request_id(id));
  }
  EXPECT_NE(request_id_from(nullptr), request_id_from(nullptr));
}

TEST(Log, LevelsFilter) {
  static std::vector<std::string> lines;
  lines.clear();
  set_test_sink([](const std::string& line) { lines.push_back(line); });
  configure(Format::kJson, Level::kWarn);
  info("dropped");
  warn("kept");
  error("kept_too");
  configure(Format::kText, Level::kOff);
  error("dropped_too");
  set_test_sink(nullptr);
  configure(Format::kText, Level::kInfo);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("\"event\":\"kept\""), std::string::npos);
  EXPECT_EQ(*parse_level("warning"), Level::kWarn);
  EXPECT_FALSE(parse_level("loud"));
  EXPECT_FALSE(parse_format("xml"));
}

}  // namespace
}  // namespace onepass::log
