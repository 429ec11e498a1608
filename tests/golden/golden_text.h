#pragma once
// Golden end-to-end outputs (tests/data/golden, in the manner of Perfetto's
// diff tests): for every sample program and every small JAX dump, what the
// sim backend on the stock h200 model gives (makespan, busy time per
// (device, stream), counters) and, where the cpu evaluator runs it, a
// summary of the results. A cost-model change shows up as a diff of these
// files; scripts/regen-golden rewrites them.

#include <string>
#include <vector>

namespace sl::golden {

struct Case {
  std::string input;   // relative to the source root, e.g. "samples/two_gemms_one_stream.hlo"
  std::string golden;  // relative to the source root, e.g. "tests/data/golden/samples/two_gemms_one_stream.txt",
                       // "tests/data/golden/jax/small/mlp_train_step/module_0000.jit_step.txt"
};

// samples/*.hlo, samples/small/*.hlo and tests/corpus/jax/small/*/*after_optimizations.txt, sorted.
std::vector<Case> list_cases(const std::string& source_dir);

// The golden text of one input. Failures of a stage are part of the text
// ("error: simulate: ..."), so a program that stops simulating is a diff too.
std::string golden_text(const std::string& source_dir, const Case& c);

// A line diff of expected against actual ("-" expected only, "+" actual
// only, with up to `context` unchanged lines around each change); empty
// when they are equal.
std::string line_diff(const std::string& expected, const std::string& actual, int context = 2);

}  // namespace sl::golden
