#include "tests/corpus/expectations.h"

#include <fstream>
#include <sstream>

namespace sl::corpus {

std::map<std::string, Expectation> read_expectations(const std::string& path) {
  std::map<std::string, Expectation> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab1 = line.find('\t');
    if (tab1 == std::string::npos) continue;
    size_t tab2 = line.find('\t', tab1 + 1);
    Expectation expectation;
    std::string stage = line.substr(tab1 + 1, tab2 == std::string::npos ? std::string::npos : tab2 - tab1 - 1);
    if (!parse_stage(stage, &expectation.reached)) continue;
    if (tab2 != std::string::npos) expectation.detail = line.substr(tab2 + 1);
    out[line.substr(0, tab1)] = expectation;
  }
  return out;
}

std::string format_expectations(const std::vector<ModuleResult>& results) {
  std::ostringstream out;
  out << "# Written by scripts/corpus-report --update; checked by corpus_tests.\n"
      << "# file (under tests/corpus)\tlast stage reached (none parse check lower simulate evaluate)\t"
         "why the next stage did not happen\n";
  for (const ModuleResult& result : results) {
    out << result.entry.relative << '\t' << stage_name(result.outcome.reached) << '\t' << result.outcome.detail
        << '\n';
  }
  return out.str();
}

Verdict compare(const Entry& entry, const Outcome& outcome, const Expectation* expected) {
  if (entry.rejected) {
    // Failing check is the goal; passing it is a verifier gap, tolerated only
    // while expected_status.tsv pins it.
    const bool refused = outcome.reached < Stage::kCheck;
    if (!expected) return refused ? Verdict::kNew : Verdict::kWorse;
    const bool was_refused = expected->reached < Stage::kCheck;
    if (refused == was_refused) return Verdict::kSame;
    return refused ? Verdict::kBetter : Verdict::kWorse;
  }
  if (!expected) return Verdict::kNew;
  if (outcome.reached < expected->reached) return Verdict::kWorse;
  if (outcome.reached > expected->reached) return Verdict::kBetter;
  return Verdict::kSame;
}

namespace {

struct Counts {
  int modules = 0;
  int at_least[6] = {};
};

std::string row(const std::string& label, const Counts& c) {
  std::ostringstream out;
  out << "| " << label << " | " << c.modules;
  for (Stage stage : {Stage::kParse, Stage::kCheck, Stage::kLower, Stage::kSimulate, Stage::kEvaluate}) {
    out << " | " << c.at_least[static_cast<int>(stage)];
  }
  out << " |\n";
  return out.str();
}

}  // namespace

std::string format_counts(const std::vector<ModuleResult>& results) {
  Counts jax, xla, rejected;
  for (const ModuleResult& result : results) {
    const std::string group = group_of(result.entry);
    Counts& c = group == "jax" ? jax : group == "xla" ? xla : rejected;
    ++c.modules;
    for (int s = 0; s <= static_cast<int>(result.outcome.reached); ++s) ++c.at_least[s];
  }
  std::ostringstream out;
  out << "| corpus | modules | parse | check | lower | simulate | evaluate |\n"
      << "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
      << row("JAX 0.11 dumps (`tests/corpus/jax`, `captures`)", jax)
      << row("XLA test modules XLA accepts (`tests/corpus/xla`)", xla);
  out << "\nXLA test modules XLA's parser or verifier rejects: " << rejected.modules << ", of which streamlens "
      << "rejects " << (rejected.modules - rejected.at_least[static_cast<int>(Stage::kCheck)])
      << " (they must fail check).\n";
  return out.str();
}

}  // namespace sl::corpus
