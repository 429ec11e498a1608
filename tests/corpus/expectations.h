#pragma once
// tests/corpus/expected_status.tsv: the stage every corpus module reached when
// it was last regenerated (scripts/corpus-report --update), so CI notices a
// module that gets worse and says when one gets better.

#include <map>
#include <string>
#include <vector>

#include "tests/corpus/corpus_pipeline.h"

namespace sl::corpus {

struct Expectation {
  Stage reached = Stage::kNone;
  std::string detail;
};

// Relative path -> expectation; a missing file is an empty map.
std::map<std::string, Expectation> read_expectations(const std::string& path);

struct ModuleResult {
  Entry entry;
  Outcome outcome;
};

// The TSV text for these results (sorted as given).
std::string format_expectations(const std::vector<ModuleResult>& results);

enum class Verdict { kSame, kBetter, kWorse, kNew };

// kWorse when the module reaches an earlier stage than expected. For a module
// XLA rejects the order is reversed: failing check is expected, and passing it
// is kWorse unless expected_status.tsv pins that (a known verifier gap).
Verdict compare(const Entry& entry, const Outcome& outcome, const Expectation* expected);

// The README's Markdown table: modules that parse / check / lower / simulate
// / evaluate, for the JAX dumps and the XLA test modules separately.
std::string format_counts(const std::vector<ModuleResult>& results);

}  // namespace sl::corpus
