// SageMaker's answers as the bench reads them: the error shapes of the SageMaker Runtime API
// (x-amzn-ErrorType or a JSON __type, ModelError's container status), what is retried, what
// stops the run and with which words, the standard retry mode's backoff and quota, and the
// endpoint URL the AWS SDKs build.
#include "bench/sagemaker_runtime.h"

#include <gtest/gtest.h>

#include <map>

#include "base/error.h"

namespace onepass::bench {
namespace {

http::Response answer(int status, std::string body, http::Headers headers = {}) {
  http::Response r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

TEST(SageMakerErrors, TypeFromHeaderOrBody) {
  auto header = read_sagemaker_error(
      answer(400, R"({"message":"Endpoint nope of account 1 not found."})",
             {{"x-amzn-ErrorType", "ValidationError:http://internal.amazon.com/coral/x/"}}));
  EXPECT_EQ(header.type, "ValidationError");
  EXPECT_EQ(header.message, "Endpoint nope of account 1 not found.");
  auto body = read_sagemaker_error(answer(
      403, R"({"__type":"com.amazon.coral.service#UnrecognizedClientException","Message":"bad"})"));
  EXPECT_EQ(body.type, "UnrecognizedClientException");
  EXPECT_EQ(body.message, "bad");
  auto bare = read_sagemaker_error(answer(502, "<html>bad gateway</html>"));
  EXPECT_EQ(bare.type, "");
  EXPECT_EQ(error_key(bare), "502");
}

TEST(SageMakerErrors, ModelErrorCarriesTheContainersAnswer) {
  const auto e = read_sagemaker_error(answer(
      424,
      R"({"ErrorCode":"CLIENT_ERROR_FROM_MODEL","Message":"Received client error (422) from primary","OriginalMessage":"{\"error\":\"inputs is required\"}","OriginalStatusCode":422})",
      {{"x-amzn-ErrorType", "ModelError:http://internal.amazon.com/coral/com.amazon.sagemaker/"}}));
  EXPECT_EQ(classify(e), ErrorDisposition::kFail);
  EXPECT_EQ(error_key(e), "ModelError(422)");
  const std::string text = error_text(e);
  EXPECT_NE(text.find("container answered 422"), std::string::npos) << text;
  EXPECT_NE(text.find("inputs is required"), std::string::npos) << text;
}

TEST(SageMakerErrors, WhatIsRetriedAndWhatStops) {
  auto typed = [](int status, const char* type) {
    SageMakerError e;
    e.status = status;
    e.type = type;
    return classify(e);
  };
  EXPECT_EQ(typed(400, "ThrottlingException"), ErrorDisposition::kRetryThrottled);
  EXPECT_EQ(typed(429, ""), ErrorDisposition::kRetryThrottled);
  EXPECT_EQ(typed(503, "ServiceUnavailable"), ErrorDisposition::kRetryTransient);
  EXPECT_EQ(typed(500, "InternalFailure"), ErrorDisposition::kRetryTransient);
  EXPECT_EQ(typed(400, "ValidationError"), ErrorDisposition::kStop);
  EXPECT_EQ(typed(403, "InvalidSignatureException"), ErrorDisposition::kStop);
  EXPECT_EQ(typed(403, "UnrecognizedClientException"), ErrorDisposition::kStop);
  EXPECT_EQ(typed(403, "ExpiredTokenException"), ErrorDisposition::kStop);
  EXPECT_EQ(typed(400, "SomethingElse"), ErrorDisposition::kFail);
  EXPECT_EQ(typed(413, ""), ErrorDisposition::kFail);
}

TEST(SageMakerErrors, StopMessagesNameTheCause) {
  SageMakerRuntime runtime;
  runtime.endpoint_name = "nli";
  runtime.region = "eu-west-1";
  auto message = [&](int status, const char* type, const char* text) {
    SageMakerError e;
    e.status = status;
    e.type = type;
    e.message = text;
    return runtime.stop_message(e);
  };
  const std::map<std::string, std::string> cases = {
      {message(403, "InvalidSignatureException",
               "The request signature we calculated does not "
               "match the signature you provided."),
       "signature"},
      {message(403, "InvalidSignatureException",
               "Signature expired: 20261207T100000Z is now earlier than 20261207T110000Z"),
       "clock skew"},
      {message(403, "ExpiredTokenException",
               "The security token included in the request is expired"),
       "expired"},
      {message(403, "UnrecognizedClientException", "The security token is invalid."),
       "does not know the access key"},
      {message(400, "ValidationError", "Endpoint nli of account 1 not found."), "unknown endpoint"},
  };
  for (const auto& [text, cause] : cases) {
    EXPECT_NE(text.find(cause), std::string::npos) << text;
    EXPECT_NE(text.find("nli in eu-west-1"), std::string::npos) << text;
  }
  EXPECT_NE(message(400, "ValidationError", "x").find("(ValidationError, HTTP 400)"),
            std::string::npos);
}

TEST(SageMakerRetry, FullJitterBackoffAndQuota) {
  SageMakerRuntime runtime;
  EXPECT_EQ(runtime.backoff(1, 0.999).count(), 199);
  EXPECT_EQ(runtime.backoff(2, 0.5).count(), 200);
  EXPECT_EQ(runtime.backoff(30, 0.5).count(), 10000);  // capped at 20 s
  EXPECT_EQ(runtime.backoff(3, 0.0).count(), 0);
  RetryQuota quota;
  std::size_t granted = 0;
  while (quota.acquire(RetryQuota::kRetryCost)) ++granted;
  EXPECT_EQ(granted, 100u);  // 500 tokens, 5 a retry
  quota.release(RetryQuota::kRetryCost);
  EXPECT_TRUE(quota.acquire(RetryQuota::kRetryCost));
  quota.release(1000);
  EXPECT_EQ(quota.available(), RetryQuota::kCapacity);
}

TEST(SageMakerUrl, AsTheSdksBuildIt) {
  std::map<std::string, std::string> env;
  auto getenv = [&](const std::string& name) { return env.count(name) ? env[name] : ""; };
  EXPECT_EQ(sagemaker_endpoint_url(getenv, "eu-west-1", "nli-1"),
            "https://runtime.sagemaker.eu-west-1.amazonaws.com/endpoints/nli-1");
  env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/";
  EXPECT_EQ(sagemaker_endpoint_url(getenv, "eu-west-1", "nli-1"),
            "http://127.0.0.1:9000/endpoints/nli-1");
  env["AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME"] = "http://127.0.0.1:9001";
  EXPECT_EQ(sagemaker_endpoint_url(getenv, "eu-west-1", "nli-1"),
            "http://127.0.0.1:9001/endpoints/nli-1");
  for (const char* bad : {"", "-lead", "trail-", "has_underscore", "a/b"}) {
    EXPECT_THROW(sagemaker_endpoint_url(getenv, "r", bad), Error) << bad;
  }
}

}  // namespace
}  // namespace onepass::bench
