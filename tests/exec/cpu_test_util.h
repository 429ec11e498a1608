#pragma once
// Helpers for the CPU backend tests: parse HLO text and run it.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/exec/cpu/cpu_backend.h"
#include "core/hlo/parser.h"

namespace sl::exec::testing {

struct Ran {
  Status status;
  RunOutput output;
};

inline Ran run_hlo(const std::string& text, int64_t replicas = 0, int64_t partitions = 0,
                   RunOptions options = {}) {
  Ran ran;
  auto module = hlo::parse_program(text, "test.hlo");
  if (!module) {
    ran.status = module.status();
    return ran;
  }
  options.collect_results = true;
  auto out = run_cpu(*module, replicas, partitions, options);
  if (!out) {
    ran.status = out.status();
    return ran;
  }
  ran.output = std::move(out).value();
  return ran;
}

// Values of output `leaf` on `device`; fails the test when the run failed.
inline std::vector<double> values_of(const Ran& ran, size_t device = 0, size_t leaf = 0) {
  EXPECT_TRUE(ran.status.is_ok()) << ran.status.message();
  if (!ran.status.is_ok() || device >= ran.output.results.size() ||
      leaf >= ran.output.results[device].outputs.size()) {
    ADD_FAILURE() << "no output " << leaf << " on device " << device;
    return {};
  }
  return ran.output.results[device].outputs[leaf].values;
}

inline std::string shape_of(const Ran& ran, size_t device = 0, size_t leaf = 0) {
  if (!ran.status.is_ok() || device >= ran.output.results.size() ||
      leaf >= ran.output.results[device].outputs.size()) {
    return "<none>";
  }
  return hlo::to_string(ran.output.results[device].outputs[leaf].shape);
}

// A one-device program whose ROOT is `root_expr` over the given lines.
inline std::string entry(const std::string& body) { return "HloModule t\n\nENTRY main {\n" + body + "\n}\n"; }

// ROOT = op(a, b) with a, b constants of type `t` and `n` elements.
inline std::vector<double> binary(const std::string& op, const std::string& t, const std::string& a,
                                  const std::string& b, const std::string& n = "4") {
  std::string shape = t + "[" + n + "]";
  return values_of(run_hlo(entry("  a = " + shape + " constant(" + a + ")\n  b = " + shape + " constant(" + b +
                                 ")\n  ROOT r = " + shape + " " + op + "(a, b)")));
}

// ROOT = op(a); the result has type `result_type` (default: `t`).
inline std::vector<double> unary(const std::string& op, const std::string& t, const std::string& a,
                                 const std::string& n = "4", const std::string& result_type = "") {
  std::string shape = t + "[" + n + "]";
  std::string out = (result_type.empty() ? t : result_type) + "[" + n + "]";
  return values_of(run_hlo(entry("  a = " + shape + " constant(" + a + ")\n  ROOT r = " + out + " " + op + "(a)")));
}

}  // namespace sl::exec::testing
