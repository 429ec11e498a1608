// corpus_report [--update]: runs every corpus module through the pipeline,
// prints the Markdown table of how many parse / check / lower / simulate /
// evaluate, and with --update rewrites tests/corpus/expected_status.tsv.
// Exit status: 0, or 1 when a module does worse than its expectation (without
// --update).

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/corpus/corpus_pipeline.h"
#include "tests/corpus/expectations.h"

int main(int argc, char** argv) {
  using namespace sl::corpus;
  bool update = false;
  bool verbose = false;
  std::string root = std::string(SL_SOURCE_DIR) + "/tests/corpus";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--update") == 0) {
      update = true;
    } else if (std::strcmp(argv[i], "-v") == 0 || std::strcmp(argv[i], "--verbose") == 0) {
      verbose = true;
    } else if (std::strcmp(argv[i], "--root") == 0 && i + 1 < argc) {
      root = argv[++i];
    } else {
      std::fprintf(stderr, "usage: corpus_report [--update] [--verbose] [--root DIR]\n");
      return 2;
    }
  }
  const std::string expected_path = root + "/expected_status.tsv";
  const auto expected = read_expectations(expected_path);
  std::vector<ModuleResult> results;
  int worse = 0, better = 0;
  for (const Entry& entry : list_corpus(root)) {
    Outcome outcome = run_isolated(entry, 300);
    auto it = expected.find(entry.relative);
    Verdict verdict = compare(entry, outcome, it == expected.end() ? nullptr : &it->second);
    worse += verdict == Verdict::kWorse;
    better += verdict == Verdict::kBetter;
    if (verbose || verdict == Verdict::kWorse) {
      std::fprintf(stderr, "%s%s: %s%s%s\n", verdict == Verdict::kWorse ? "WORSE " : "", entry.relative.c_str(),
                   stage_name(outcome.reached), outcome.detail.empty() ? "" : "; ", outcome.detail.c_str());
    }
    results.push_back({entry, outcome});
  }
  std::printf("%s", format_counts(results).c_str());
  if (update) {
    FILE* f = std::fopen(expected_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "corpus_report: cannot write %s\n", expected_path.c_str());
      return 3;
    }
    std::string text = format_expectations(results);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    std::fprintf(stderr, "wrote %s (%zu modules; %d better, %d worse than before)\n", expected_path.c_str(),
                 results.size(), better, worse);
    return 0;
  }
  std::fprintf(stderr, "%zu modules: %d better, %d worse than expected_status.tsv\n", results.size(), better,
               worse);
  return worse > 0 ? 1 : 0;
}
