// The dialect of no client family: GET /metrics, and the error shape of a path no dialect's
// route matches ({"error": message}).
#pragma once

#include "api/common/dialect.h"

namespace onepass::api {

extern const DialectSpec kGenericDialect;

}  // namespace onepass::api
