// End to end on real JAX dumps: every tests/corpus/jax/small/PROGRAM with an
// expected.json (the outputs JAX computed on the GPU for `--init ramp`
// inputs) is parsed, before and after XLA's optimizations, evaluated by the
// cpu backend and compared with the GPU's outputs.
//
// Tolerances, |cpu - gpu| <= atol + rtol * |gpu| per element:
//   integer and pred outputs   exact
//   f32 / f64 outputs          atol 1e-5, rtol 1e-4 (GPU transcendentals
//                              differ by a few ulps and reductions sum in
//                              another order; matmuls ran at "highest")
//   a program with bf16 math   atol 0.05, rtol 0.05 (bf16 keeps 8 bits; one
//                              rounding apart early on grows through a
//                              training step), whatever its output types
// Programs that cannot evaluate yet are in kKnownGaps with the reason; a
// listed program that starts to match fails, so the list only shrinks.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "core/exec/cpu/cpu_backend.h"
#include "core/exec/results_json.h"
#include "core/hlo/parser.h"

namespace sl::exec {
namespace {

namespace fs = std::filesystem;

// SL_JAX_CORPUS points the test at another copy of the corpus.
const fs::path kCorpus = std::getenv("SL_JAX_CORPUS") ? fs::path(std::getenv("SL_JAX_CORPUS"))
                                                      : fs::path(SL_SOURCE_DIR) / "tests/corpus/jax/small";

// "program/stage" -> why it cannot evaluate (or match) yet.
const std::map<std::string, std::string> kKnownGaps = {};

struct Case {
  std::string program;
  std::string stage;  // "after" or "before" optimizations
  fs::path module;
  fs::path expected;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.program << "/" << c.stage; }

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Case> cases() {
  std::vector<Case> out;
  if (!fs::exists(kCorpus)) return out;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kCorpus)) {
    if (e.is_directory() && fs::exists(e.path() / "expected.json")) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      std::string stage;
      if (name.find("after_optimizations.txt") != std::string::npos) stage = "after";
      if (name.find("before_optimizations.txt") != std::string::npos) stage = "before";
      if (!stage.empty()) out.push_back({dir.filename().string(), stage, e.path(), dir / "expected.json"});
    }
  }
  std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) {
    return std::tie(a.program, a.stage) < std::tie(b.program, b.stage);
  });
  return out;
}

struct Tolerance {
  double atol = 0, rtol = 0;
};

Tolerance tolerance_for(hlo::PrimitiveType type, bool low_precision_program) {
  if (!hlo::is_floating(type)) return {0, 0};
  if (low_precision_program) return {0.05, 0.05};
  return {1e-5, 1e-4};
}

// Empty when the results match; otherwise what differs. `max_error` gets the
// largest |cpu - gpu| over float outputs.
std::string compare(const std::vector<DeviceResults>& got, const std::vector<DeviceResults>& want,
                    bool low_precision, double* max_error) {
  *max_error = 0;
  if (got.size() != want.size()) return "device count differs";
  for (size_t d = 0; d < want.size(); ++d) {
    if (got[d].outputs.size() != want[d].outputs.size()) {
      return "device " + std::to_string(d) + ": " + std::to_string(got[d].outputs.size()) + " outputs, expected " +
             std::to_string(want[d].outputs.size());
    }
    for (size_t o = 0; o < want[d].outputs.size(); ++o) {
      const Literal& g = got[d].outputs[o];
      const Literal& w = want[d].outputs[o];
      if (g.shape != w.shape) return "output " + std::to_string(o) + ": shape " + hlo::to_string(g.shape) +
                                     ", expected " + hlo::to_string(w.shape);
      const Tolerance tol = tolerance_for(w.shape.type, low_precision);
      for (size_t i = 0; i < w.values.size(); ++i) {
        const double a = g.values[i], b = w.values[i];
        if (std::isnan(a) && std::isnan(b)) continue;
        const double err = a == b ? 0.0 : std::fabs(a - b);
        if (hlo::is_floating(w.shape.type)) *max_error = std::max(*max_error, std::isnan(err) ? INFINITY : err);
        if (!(err <= tol.atol + tol.rtol * std::fabs(b))) {
          std::ostringstream os;
          os << "output " << o << " element " << i << ": cpu " << a << ", gpu " << b;
          return os.str();
        }
      }
    }
  }
  return "";
}

class JaxCorpus : public ::testing::TestWithParam<Case> {};

TEST_P(JaxCorpus, MatchesGpuOutputs) {
  const Case& c = GetParam();
  const std::string key = c.program + "/" + c.stage;
  auto gap = kKnownGaps.find(key);
  std::string failure;
  double max_error = 0;
  const std::string text = read(c.module);
  auto module = hlo::parse_program(text, c.module.string());
  if (!module) {
    failure = "parse: " + module.status().message();
  } else {
    RunOptions options;
    options.collect_results = true;
    auto out = run_cpu(*module, 0, 0, options);
    auto want = results_from_json(read(c.expected));
    if (!want) {
      FAIL() << c.expected << ": " << want.status().message();
    } else if (!out) {
      failure = "run: " + out.status().message();
    } else {
      const bool low_precision = text.find("bf16[") != std::string::npos || text.find("f16[") != std::string::npos;
      failure = compare(out->results, *want, low_precision, &max_error);
    }
  }
  if (gap != kKnownGaps.end()) {
    EXPECT_FALSE(failure.empty()) << key << " now matches (max error " << max_error
                                  << "): remove it from kKnownGaps";
    GTEST_SKIP() << key << ": " << gap->second << " (now: " << failure.substr(0, 300) << ")";
  }
  ASSERT_TRUE(failure.empty()) << key << ": " << failure;
  std::cout << "[ corpus ] " << key << " matches, max error " << max_error << "\n";
  RecordProperty("max_error", std::to_string(max_error));
}

INSTANTIATE_TEST_SUITE_P(Small, JaxCorpus, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.program + "_" + info.param.stage;
                         });

TEST(JaxCorpusFiles, AreThere) { EXPECT_GE(cases().size(), 16u) << kCorpus; }

}  // namespace
}  // namespace sl::exec
