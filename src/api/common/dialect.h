// What one API dialect (one folder under src/api) tells the router: its routes and how its
// errors look. Each dialect folder defines one DialectSpec in its dialect.cpp; api.cpp lists
// them in one table and never names a dialect anywhere else, so a new dialect is its folder plus
// one line there (docs/api.md "Adding a dialect").
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "api/common/api_error.h"

namespace onepass::api {

struct Call;

using RouteHandler = void (*)(Call&);

// Route::flags, or-ed together.
enum RouteFlag : unsigned {
  kRouteOpen = 1u << 0,        // no API key needed (health, readiness, metrics)
  kRouteManagement = 1u << 1,  // only with --enable-model-management
  kRouteLiveness = 1u << 2,    // still served while draining (liveness, metrics)
  kRouteReadiness = 1u << 3,   // answers 503 "unhealthy" while draining (readiness probes)
};

struct Route {
  const char* method;
  const char* pattern;  // "{model}" matches one path segment
  RouteHandler handler;
  unsigned flags = 0;  // RouteFlag bits
};

struct DialectSpec {
  // Short lower-case name, for diagnostics; the request log line and metrics name the route.
  std::string_view name;
  // The status an error kind gets in this dialect (most start from default_http_status()).
  int (*http_status)(ApiErrorKind kind);
  // The dialect's error body for `error`, answered with `status`.
  std::string (*error_body)(const ApiError& error, int status);
  // In match order: the first route whose method and path match wins, and a path that matches
  // only with other methods is answered 405 with those methods in Allow, in this order.
  std::span<const Route> routes;
};

}  // namespace onepass::api
