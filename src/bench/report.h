// `onepass bench report`: results JSON files (schema onepass-bench/1) into one self-contained
// HTML page: latency percentiles vs concurrency, samples/s and batch efficiency vs batch size,
// one series per endpoint, plus the numbers as tables.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace onepass::bench {

// `results` are parsed result documents with a label each (their file name), used to tell apart
// endpoints of the same name from different files. Throws Error(kInvalidInput) for a document
// that is not a bench result.
std::string render_report(const std::vector<std::pair<std::string, nlohmann::json>>& results);

// Reads the files, renders, writes `output`. Throws Error(kNotFound / kInvalidInput).
void write_report(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace onepass::bench
