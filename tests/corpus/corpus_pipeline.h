#pragma once
// The corpus harness: every module under tests/corpus goes through parse,
// verify (check), lower, simulate and, when small enough, the cpu evaluator.
// Each stage's failure is a value; a crash or hang of one module is isolated
// in a child process so it cannot take the rest of the corpus down.

#include <cstdint>
#include <string>
#include <vector>

namespace sl::hlo {
struct Module;
}

namespace sl::corpus {

// Stages in order; Outcome::reached is the last one that succeeded.
enum class Stage { kNone = 0, kParse, kCheck, kLower, kSimulate, kEvaluate };

const char* stage_name(Stage stage);
// "none", "parse", ... -> Stage; false for anything else.
bool parse_stage(const std::string& name, Stage* stage);

struct Entry {
  std::string path;      // absolute
  std::string relative;  // to tests/corpus, e.g. "xla/hlo_parser_test/Dot.hlo"
  int64_t replicas = 0;  // 0: the module's own (header) count
  int64_t partitions = 0;
  bool rejected = false;  // XLA's own test expects its parser/verifier to refuse it
};

struct Outcome {
  Stage reached = Stage::kNone;
  // Why the next stage did not happen: "lower: <first line of the error>",
  // "evaluate: skipped (...)"; empty when every stage ran.
  std::string detail;
};

// Every corpus module under `root` (tests/corpus): XLA test modules (*.hlo,
// device counts and verdicts from xla/MANIFEST.tsv) and XLA dumps
// (*optimizations.txt). Sorted by relative path.
std::vector<Entry> list_corpus(const std::string& root);

// Runs the stages in this process.
Outcome run_stages(const Entry& entry);

// Runs the stages in a forked child; a crash or a run past timeout_s becomes
// the detail of the stage it happened in.
Outcome run_isolated(const Entry& entry, int timeout_s);

// Work the cpu evaluator would do, summed over every instruction of every
// computation and multiplied by the device count: result bytes and
// multiply-adds of dots and convolutions.
struct EvalCost {
  int64_t bytes = 0;
  int64_t flops = 0;
};
inline constexpr int64_t kMaxEvalBytes = int64_t{64} << 20;
inline constexpr int64_t kMaxEvalFlops = int64_t{200} * 1000 * 1000;
EvalCost eval_cost(const hlo::Module& module);

// Groups for the report: "jax" (XLA's dumps of JAX programs: jax/ and
// captures/), "xla" and "xla-rejected" (modules of XLA's tests).
std::string group_of(const Entry& entry);

}  // namespace sl::corpus
