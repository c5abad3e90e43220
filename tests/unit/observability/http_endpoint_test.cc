#include "observability/http_endpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "observability/metrics_route.h"
#include "tests/support/http_get.h"

namespace tuned::observability {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using tuned::testing::HttpGet;

std::unique_ptr<HttpEndpoint> Serve(std::vector<std::string> tokens, std::vector<HttpRoute> routes) {
  HttpEndpointOptions options;
  options.listen = "127.0.0.1:0";
  options.tokens = std::move(tokens);
  options.routes = std::move(routes);
  auto endpoint = HttpEndpoint::Start(std::move(options));
  EXPECT_TRUE(endpoint.ok()) << endpoint.status().message();
  return endpoint.ok() ? std::move(*endpoint) : nullptr;
}

HttpRoute Fixed(const std::string& path, bool needs_token, const std::string& body) {
  HttpRoute route;
  route.path = path;
  route.needs_token = needs_token;
  route.handler = [body](const HttpRequest& request) {
    return HttpResponse{200, "text/plain", body + " " + request.path + "?" + request.query};
  };
  return route;
}

TEST(HttpEndpoint, DataRoutesWantTheBearerTokenAndThePageDoesNot) {
  auto endpoint = Serve({"s3cret", "other"}, {Fixed("/", false, "page"), Fixed("/api/x", true, "data")});
  ASSERT_NE(endpoint, nullptr);
  ASSERT_GT(endpoint->port(), 0);
  EXPECT_THAT(HttpGet(endpoint->port(), "/api/x"), StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(HttpGet(endpoint->port(), "/api/x"), HasSubstr("WWW-Authenticate: Bearer"));
  EXPECT_THAT(HttpGet(endpoint->port(), "/api/x", "wrong"), StartsWith("HTTP/1.1 401"));
  const std::string ok = HttpGet(endpoint->port(), "/api/x?a=1", "other");
  EXPECT_THAT(ok, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(ok, HasSubstr("data /api/x?a=1"));
  EXPECT_THAT(HttpGet(endpoint->port(), "/"), StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(HttpGet(endpoint->port(), "/nothing", "s3cret"), StartsWith("HTTP/1.1 404"));
}

TEST(HttpEndpoint, WithoutTokensEverythingIsOpen) {
  auto endpoint = Serve({}, {Fixed("/api/", true, "data")});
  ASSERT_NE(endpoint, nullptr);
  EXPECT_THAT(HttpGet(endpoint->port(), "/api/"), StartsWith("HTTP/1.1 200"));
}

TEST(HttpEndpoint, PrefixRoutesMatchBelowTheirPath) {
  HttpRoute tasks = Fixed("/api/tasks/", true, "task");
  tasks.prefix = true;
  auto endpoint = Serve({}, {tasks});
  ASSERT_NE(endpoint, nullptr);
  EXPECT_THAT(HttpGet(endpoint->port(), "/api/tasks/abc/curve"), HasSubstr("task /api/tasks/abc/curve"));
  EXPECT_THAT(HttpGet(endpoint->port(), "/api/task"), StartsWith("HTTP/1.1 404"));
}

TEST(HttpEndpoint, BadAddressesAreRefusedNamingTheFlag) {
  EXPECT_EQ(CheckListenAddress("127.0.0.1", "--metrics-listen").code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(CheckListenAddress("localhost:http", "--metrics-listen").message(),
              HasSubstr("--metrics-listen 'localhost:http' is not host:port"));
  EXPECT_TRUE(CheckListenAddress("[::1]:9100", "--metrics-listen").ok());
  HttpEndpointOptions options;
  options.listen = "127.0.0.1:0";
  auto first = HttpEndpoint::Start(options);
  ASSERT_TRUE(first.ok());
  options.listen = "127.0.0.1:" + std::to_string((*first)->port());
  EXPECT_EQ(HttpEndpoint::Start(options).status().code(), StatusCode::kUnavailable);
}

TEST(MetricsRoute, ServesTheRegistryInTheTextFormat) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto& family = prometheus::BuildCounter().Name("tuned_test_things_total").Help("Things").Register(*registry);
  family.Add({{"kind", "a"}}).Increment(3);
  auto endpoint = Serve({}, {MetricsRoute({registry})});
  ASSERT_NE(endpoint, nullptr);
  const std::string response = HttpGet(endpoint->port(), "/metrics");
  EXPECT_THAT(response, HasSubstr("Content-Type: text/plain; version=0.0.4"));
  EXPECT_THAT(response, HasSubstr("# TYPE tuned_test_things_total counter"));
  EXPECT_THAT(response, HasSubstr("tuned_test_things_total{kind=\"a\"} 3"));
}

}  // namespace
}  // namespace tuned::observability
