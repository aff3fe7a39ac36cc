// The route table's rules, on api::Api directly (no sockets, a FakeService): the first route
// whose method and path match wins, a path served only with other methods is 405 with those
// methods in Allow in table order, a request no route takes gets the error shape of the first
// dialect with a route on its path, and draining spares only liveness and metrics (readiness
// probes answer 503 "unhealthy"). These hold whatever dialect folders add routes.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/fuzz/fake_service.h"

namespace onepass::testing {
namespace {

using api::fuzzing::FakeService;

class RoutingTest : public ::testing::Test {
 protected:
  void start(bool management) {
    api::ApiOptions options;
    options.enable_model_management = management;
    api_ = std::make_unique<api::Api>(service_, options);
  }

  // Only for requests answered before anything is submitted, so the answer is synchronous.
  http::Response exchange(std::string method, std::string target) {
    http::Request request;
    request.method = std::move(method);
    request.target = std::move(target);
    std::vector<http::Response> answers;
    api_->handle(std::move(request),
                 [&answers](http::Response response) { answers.push_back(std::move(response)); });
    EXPECT_EQ(answers.size(), 1u);
    return answers.empty() ? http::Response{} : answers.front();
  }

  static std::string allow(const http::Response& response) {
    for (const auto& h : response.headers)
      if (h.name == "Allow") return h.value;
    return "(no Allow)";
  }

  FakeService service_;
  std::unique_ptr<api::Api> api_;
};

TEST_F(RoutingTest, WrongMethodListsEveryMethodOfThePathInTableOrder) {
  start(/*management=*/true);
  // SageMaker's two management routes, then the Inference API's per-model route; the error is
  // in the shape of the first dialect on the path (SageMaker's).
  auto r = exchange("PUT", "/models/nli");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(allow(r), "GET, DELETE, POST");
  EXPECT_EQ(
      r.body,
      R"({"code":405,"type":"InternalServerException","message":"method 'PUT' is not allowed here"})");
  r = exchange("PATCH", "/models");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(allow(r), "GET, POST");
  // vLLM's shape for its own path.
  r = exchange("GET", "/v1/score");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(allow(r), "POST");
  EXPECT_EQ(
      r.body,
      R"({"error":{"message":"method 'GET' is not allowed here","type":"MethodNotAllowedError","param":null,"code":405}})");
}

TEST_F(RoutingTest, ManagementRoutesExistOnlyWhenEnabled) {
  start(/*management=*/false);
  // The management routes are skipped: only the Inference API's POST is left on the path, yet
  // the error shape is still that of the first dialect with a route on it.
  auto r = exchange("PUT", "/models/nli");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(allow(r), "POST");
  EXPECT_EQ(
      r.body,
      R"({"code":405,"type":"InternalServerException","message":"method 'PUT' is not allowed here"})");
  r = exchange("GET", "/models");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(
      r.body,
      R"({"code":404,"type":"InternalServerException","message":"no route for 'GET' '/models'"})");
}

TEST_F(RoutingTest, UnknownPathGetsTheGenericErrorShape) {
  start(/*management=*/false);
  const auto r = exchange("GET", "/no/such/route");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, R"({"error":"no route for 'GET' '/no/such/route'"})");
  EXPECT_EQ(allow(r), "(no Allow)");
}

TEST_F(RoutingTest, DrainingSparesLivenessAndMetricsOnly) {
  start(/*management=*/false);
  api_->begin_drain();
  for (const char* probe : {"/ping", "/health"}) {
    SCOPED_TRACE(probe);
    const auto r = exchange("GET", probe);
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(r.body, R"({"error":"unhealthy","error_type":"Unhealthy"})");
  }
  EXPECT_EQ(exchange("GET", "/v2/health/live").status, 200);
  EXPECT_EQ(exchange("GET", "/metrics").status, 200);
  // Everything else is refused in its dialect's shape.
  auto r = exchange("GET", "/v2/health/ready");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, R"({"error":"the server is shutting down"})");
  r = exchange("GET", "/info");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, R"({"error":"the server is shutting down","error_type":"Unhealthy"})");
  r = exchange("POST", "/v1/embeddings");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(
      r.body,
      R"({"error":{"message":"the server is shutting down","type":"server_error","param":null,"code":null}})");
}

}  // namespace
}  // namespace onepass::testing
