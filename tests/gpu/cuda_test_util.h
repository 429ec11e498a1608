#pragma once
// What the cuda backend tests share: run a program on the cpu and the cuda
// backend and compare the results; a fixture that skips without a GPU.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "core/exec/cpu/cpu_backend.h"
#include "core/exec/cuda/cuda_backend.h"
#include "core/hlo/parser.h"
#include "core/sched/lowering.h"

namespace sl::exec::gpu_test {

struct Both {
  Status status;
  RunOutput cpu, cuda;
};

// `exact_f32`: f32 GEMMs in full f32 (RunOptions::exact_f32_gemms), so the
// cpu backend's tolerances hold; false runs them at XLA's precision (TF32).
inline Both run_both(const std::string& text, RunOptions options = {}, bool exact_f32 = true) {
  Both b;
  auto module = hlo::parse_program(text, "gpu_test.hlo");
  if (!module) { b.status = module.status(); return b; }
  auto lowered = sched::lower(*module, {});
  if (!lowered) { b.status = lowered.status(); return b; }
  options.collect_results = true;
  auto cpu = run_cpu(*module, 0, 0, options);
  if (!cpu) { b.status = cpu.status(); return b; }
  auto backend = make_cuda_backend({});
  if (!backend) { b.status = backend.status(); return b; }
  options.exact_f32_gemms = exact_f32;
  auto cuda = (*backend)->run(*lowered, options);
  if (!cuda) { b.status = cuda.status(); return b; }
  b.cpu = std::move(cpu).value();
  b.cuda = std::move(cuda).value();
  return b;
}

// rel_tol 0: exact (NaN equals NaN).
inline void expect_same(const Both& b, double rel_tol = 0.0) {
  ASSERT_TRUE(b.status.is_ok()) << b.status.message();
  ASSERT_EQ(b.cpu.results.size(), b.cuda.results.size());
  for (size_t d = 0; d < b.cpu.results.size(); ++d) {
    const auto& c = b.cpu.results[d].outputs;
    const auto& g = b.cuda.results[d].outputs;
    ASSERT_EQ(c.size(), g.size()) << "device " << d;
    for (size_t l = 0; l < c.size(); ++l) {
      ASSERT_EQ(c[l].values.size(), g[l].values.size()) << "device " << d << " leaf " << l;
      double scale = 0.0;
      for (double v : c[l].values) scale = std::max(scale, std::fabs(v));
      for (size_t i = 0; i < c[l].values.size(); ++i) {
        double x = c[l].values[i], y = g[l].values[i];
        if ((std::isnan(x) && std::isnan(y)) || x == y) continue;  // x == y: equal infinities too
        if (rel_tol == 0.0) {
          ASSERT_EQ(x, y) << "device " << d << " leaf " << l << " element " << i;
        } else {
          ASSERT_NEAR(x, y, rel_tol * std::max(1.0, scale)) << "device " << d << " leaf " << l << " element " << i;
        }
      }
    }
  }
}

// Random parameters (InitMode::kRandom) from `seed`.
inline RunOptions random_init(uint64_t seed) {
  RunOptions o;
  o.init = InitMode::kRandom;
  o.seed = seed;
  return o;
}

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU";
  }
};

// A run's counter by name; -1 when it has none.
inline int64_t counter(const trace::Trace& t, const std::string& name) {
  for (const auto& c : t.counters) {
    if (c.name == name) return c.value;
  }
  return -1;
}

}  // namespace sl::exec::gpu_test
