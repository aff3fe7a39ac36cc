// The load generator through the SageMaker Runtime path against loopback doubles: requests go
// to /invocations whatever the dialect's route, each attempt is signed, a ModelError is counted
// under the container's status with its message, throttling past the last attempt is an error
// of its own, and an error that stops the run (or credentials that can no longer be refreshed)
// ends it with the reason once the requests in flight return.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "bench/bench.h"
#include "bench/results.h"
#include "fake_server.h"

namespace onepass::bench::testing {
namespace {

using namespace std::chrono_literals;

// What the container behind the endpoint answers: the request as SageMaker forwards it, to
// /invocations, answered as onepass answers it.
FakeResponse answer_as_container(FakeRequest request) {
  request.target = "/invocations";
  return answer_like_onepass(request, false);
}

Workload sagemaker_workload() {
  Workload w;
  w.dataset_name = "default";
  w.samples = default_dataset();
  w.samples.resize(6);
  w.requests = 12;
  w.warmup = 0;
  w.timeout = 10000ms;
  return w;
}

// A SageMaker endpoint at `server`, signed by a counter instead of SigV4 (sigv4_test and the
// sagemaker client test check real signatures), with backoff short enough for a unit test.
using Signer = std::function<void(http::Request&, const http::Url&)>;

// A SageMaker endpoint at `server` with backoff short enough for a unit test, signed by `sign`
// (sigv4_test and the sagemaker client test check real signatures).
EndpointSpec sagemaker_endpoint(const FakeServer& server, Signer sign) {
  EndpointSpec e;
  e.name = "sm";
  e.url = server.url() + "/endpoints/nli";
  e.dialect = "hf";
  e.options.model = "fake";
  auto runtime = std::make_shared<SageMakerRuntime>();
  runtime->endpoint_name = "nli";
  runtime->region = "eu-west-1";
  runtime->backoff_base = 1ms;
  runtime->sign = std::move(sign);
  e.options.sagemaker = std::move(runtime);
  return e;
}

// A signer that counts its signatures.
EndpointSpec sagemaker_endpoint(const FakeServer& server, std::atomic<int>& signatures) {
  return sagemaker_endpoint(server, [&signatures](http::Request& request, const http::Url&) {
    request.headers.emplace_back("Authorization", "signed-" + std::to_string(++signatures));
  });
}

FakeResponse model_error(int container_status) {
  return {424, nlohmann::json{{"ErrorCode", "CLIENT_ERROR_FROM_MODEL"},
                              {"Message", "Received client error from primary"},
                              {"OriginalStatusCode", container_status},
                              {"OriginalMessage", "{\"error\":\"input too long\"}"}}
                   .dump()};
}

TEST(SageMakerLoad, EveryDialectGoesToInvocationsSignedPerAttempt) {
  std::atomic<int> signatures{0}, throttles{0};
  std::atomic<int> requests{0};
  FakeServer server([&](const FakeRequest& r) {
    if (r.target != "/endpoints/nli/invocations") return FakeResponse{404, "wrong route"};
    if (r.headers.count("authorization") == 0) return FakeResponse{403, "unsigned"};
    // Every fourth request after the reference pass is throttled once.
    if (++requests > 6 && requests % 4 == 0) {
      ++throttles;
      return FakeResponse{400, R"({"__type":"ThrottlingException","message":"Rate exceeded"})"};
    }
    return answer_as_container(r);
  });
  const BenchResult result =
      run_bench({sagemaker_endpoint(server, signatures)}, sagemaker_workload());
  const RunResult& run = result.endpoints[0].runs[0];
  EXPECT_EQ(run.errors.size(), 0u);
  EXPECT_EQ(run.ok_requests, 12u);
  EXPECT_EQ(run.mismatches, 0u);
  EXPECT_EQ(run.throttled, static_cast<std::size_t>(throttles.load()));
  EXPECT_EQ(run.sdk_retries, run.throttled);
  EXPECT_GT(run.throttled, 0u);
  EXPECT_EQ(signatures.load(), requests.load());  // a retry is signed again
  const auto doc = to_json(result)["endpoints"][0];
  EXPECT_EQ(doc["sagemaker"]["endpoint_name"], "nli");
  EXPECT_EQ(doc["sagemaker"]["region"], "eu-west-1");
  EXPECT_EQ(doc["runs"][0]["throttled"], run.throttled);
}

TEST(SageMakerLoad, ModelErrorsAndExhaustedRetriesAreCountedWithTheirWords) {
  std::atomic<int> signatures{0}, requests{0};
  FakeServer server([&](const FakeRequest& r) {
    const int i = ++requests;
    if (i <= 6) {  // the reference pass
      return answer_as_container(r);
    }
    // One connection, so in order: request 2 is throttled on all three attempts (8, 9, 10),
    // requests 5 and 9 (13 and 17) get the container's 422.
    if (i >= 8 && i <= 10)
      return FakeResponse{429, R"({"__type":"ThrottlingException","message":"slow down"})"};
    if (i == 13 || i == 17) return model_error(422);
    return answer_as_container(r);
  });
  const BenchResult result =
      run_bench({sagemaker_endpoint(server, signatures)}, sagemaker_workload());
  const RunResult& run = result.endpoints[0].runs[0];
  ASSERT_EQ(run.errors.count("ModelError(422)"), 1u) << to_json(result).dump();
  EXPECT_EQ(run.errors.at("ModelError(422)"), 2u);
  EXPECT_EQ(run.errors.at("ThrottlingException"), 1u);
  EXPECT_EQ(run.ok_requests, 9u);
  EXPECT_EQ(run.throttled, 3u);
  EXPECT_EQ(run.sdk_retries, 2u);
  EXPECT_NE(run.error_messages.at("ModelError(422)").find("container answered 422"),
            std::string::npos);
  EXPECT_NE(run.error_messages.at("ModelError(422)").find("input too long"), std::string::npos);
  EXPECT_EQ(to_json(result)["endpoints"][0]["runs"][0]["errors"]["messages"].size(),
            run.error_messages.size());
}

TEST(SageMakerLoad, AStoppingErrorEndsTheRunWithItsReason) {
  std::atomic<int> signatures{0}, requests{0};
  FakeServer server([&](const FakeRequest& r) {
    if (++requests > 8) {
      return FakeResponse{
          403, R"({"__type":"ExpiredTokenException","message":"The security token is expired"})"};
    }
    return answer_as_container(r);
  });
  Workload w = sagemaker_workload();
  w.requests = 200;
  w.concurrency = 4;
  try {
    run_bench({sagemaker_endpoint(server, signatures)}, w);
    FAIL() << "the run did not stop";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("ExpiredTokenException"), std::string::npos) << e.what();
  }
  EXPECT_LT(requests.load(), 40);  // stopped, not 200 failures
}

TEST(SageMakerLoad, CredentialsThatCannotBeRefreshedStopTheRun) {
  std::atomic<int> signatures{0};
  FakeServer server([&](const FakeRequest& r) { return answer_as_container(r); });
  const EndpointSpec e =
      sagemaker_endpoint(server, [&signatures](http::Request& request, const http::Url&) {
        if (++signatures > 6) throw Error(ErrorKind::kInvalidArgument, "STS said no");
        request.headers.emplace_back("Authorization", "x");
      });
  try {
    run_bench({e}, sagemaker_workload());
    FAIL() << "the run did not stop";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot sign the request: STS said no"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace onepass::bench::testing
