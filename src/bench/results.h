// Bench results as JSON (the schema docs/bench.md documents, read back by `onepass bench report`)
// and as readable tables for stdout.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench/bench.h"

namespace onepass::bench {

inline constexpr const char* kResultSchema = "onepass-bench/1";

nlohmann::json to_json(const BenchResult& result);

// One table per endpoint and run kind, then the agreement lines.
void print_tables(const BenchResult& result, std::FILE* out);

}  // namespace onepass::bench
