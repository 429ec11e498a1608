// Generated fusion kernels (core/exec/cuda/generated_fusions.h) against the
// cpu backend: one small fusion per supported op family, row and column
// reductions, multi-output fusions, and the JAX small dumps end to end.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/exec/cpu/cpu_backend.h"
#include "core/exec/cuda/cuda_backend.h"
#include "core/hlo/parser.h"
#include "core/sched/lowering.h"
#include "tests/gpu/cuda_test_util.h"

namespace sl::exec {
namespace {

namespace fs = std::filesystem;

struct Both {
  Status status;
  RunOutput cpu, cuda;
};

Both run_both(const std::string& text, const std::string& file, RunOptions options = {}) {
  Both b;
  auto module = hlo::parse_program(text, file);
  if (!module) { b.status = module.status(); return b; }
  auto lowered = sched::lower(*module, {});
  if (!lowered) { b.status = lowered.status(); return b; }
  options.collect_results = true;
  auto cpu = run_cpu(*module, 0, 0, options);
  if (!cpu) { b.status = cpu.status(); return b; }
  CudaOptions co;
  co.codegen_cache = "off";  // every run compiles: the cache never hides a generator change
  auto backend = make_cuda_backend(co);
  if (!backend) { b.status = backend.status(); return b; }
  auto cuda = (*backend)->run(*lowered, options);
  if (!cuda) { b.status = cuda.status(); return b; }
  b.cpu = std::move(cpu).value();
  b.cuda = std::move(cuda).value();
  return b;
}

// |cpu - cuda| <= tol * max(1, max |cpu|) per leaf (exact when tol is 0).
void expect_close(const Both& b, double tol) {
  ASSERT_TRUE(b.status.is_ok()) << b.status.message();
  ASSERT_EQ(b.cpu.results.size(), b.cuda.results.size());
  for (size_t d = 0; d < b.cpu.results.size(); ++d) {
    const auto& c = b.cpu.results[d].outputs;
    const auto& g = b.cuda.results[d].outputs;
    ASSERT_EQ(c.size(), g.size());
    for (size_t l = 0; l < c.size(); ++l) {
      ASSERT_EQ(c[l].values.size(), g[l].values.size()) << "leaf " << l;
      double scale = 1.0;
      for (double v : c[l].values) if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
      for (size_t i = 0; i < c[l].values.size(); ++i) {
        const double x = c[l].values[i], y = g[l].values[i];
        if ((std::isnan(x) && std::isnan(y)) || x == y) continue;
        ASSERT_NEAR(x, y, tol * scale) << "leaf " << l << " element " << i;
      }
    }
  }
}

using gpu_test::counter;

using gpu_test::random_init;

class GeneratedFusions : public gpu_test::CudaTest {};

// A module whose entry runs one fusion of `kind` over `params` with `body`.
std::string fusion_module(const std::string& kind, const std::string& params, const std::string& result,
                          const std::string& body, const std::string& extra = "") {
  std::ostringstream m;
  m << "HloModule m\n" << extra << "fused {\n" << body << "}\nENTRY e {\n";
  std::istringstream ps(params);
  std::string shape, args;
  int n = 0;
  while (std::getline(ps, shape, ';')) {
    m << "  x" << n << " = " << shape << " parameter(" << n << ")\n";
    args += (n ? ", x" : "x") + std::to_string(n);
    ++n;
  }
  m << "  ROOT f = " << result << " fusion(" << args << "), kind=" << kind << ", calls=fused\n}\n";
  return m.str();
}

constexpr const char* kAdd = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                             "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n";

TEST_F(GeneratedFusions, ElementwiseMath) {
  const std::string body = R"(  p0 = f32[8,64] parameter(0)
  p1 = f32[8,64] parameter(1)
  a = f32[8,64] abs(p0)
  one = f32[] constant(1)
  ones = f32[8,64] broadcast(one), dimensions={}
  a1 = f32[8,64] add(a, ones)
  l = f32[8,64] log(a1)
  r = f32[8,64] rsqrt(a1)
  t = f32[8,64] tanh(p1)
  e = f32[8,64] exponential(t)
  s = f32[8,64] sqrt(a1)
  m = f32[8,64] multiply(l, r)
  d = f32[8,64] divide(e, s)
  mx = f32[8,64] maximum(m, d)
  mn = f32[8,64] minimum(m, d)
  c = pred[8,64] compare(p0, p1), direction=LT
  sel = f32[8,64] select(c, mx, mn)
  er = f32[8,64] erf(sel)
  lg = f32[8,64] logistic(er)
  ng = f32[8,64] negate(lg)
  ROOT out = f32[8,64] subtract(ng, p1)
)";
  auto b = run_both(fusion_module("kLoop", "f32[8,64];f32[8,64]", "f32[8,64]", body), "math.hlo", random_init(3));
  expect_close(b, 1e-5);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_fusions_generated"), 1);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_fallback_fusions"), 0);
}

TEST_F(GeneratedFusions, DataMovementIsExact) {
  const std::string body = R"(  p0 = f32[4,6] parameter(0)
  p1 = f32[6] parameter(1)
  t = f32[6,4] transpose(p0), dimensions={1,0}
  b = f32[6,4] broadcast(p1), dimensions={0}
  a = f32[6,4] add(t, b)
  s = f32[3,4] slice(a), slice={[1:6:2], [0:4]}
  r = f32[3,4] reverse(s), dimensions={0,1}
  c = f32[6,4] concatenate(s, r), dimensions={0}
  io = s32[6,4] iota(), iota_dimension=1
  cv = f32[6,4] convert(io)
  m = f32[6,4] multiply(c, cv)
  z = f32[] constant(0)
  pd = f32[8,5] pad(m, z), padding=1_1x0_1
  rs = f32[40] reshape(pd)
  ROOT bc = f32[5,8] bitcast(rs)
)";
  auto b = run_both(fusion_module("kLoop", "f32[4,6];f32[6]", "f32[5,8]", body), "data.hlo", random_init(4));
  expect_close(b, 0.0);
}

TEST_F(GeneratedFusions, Bf16ChainWithConverts) {
  const std::string body = R"(  p0 = bf16[16,128] parameter(0)
  f = f32[16,128] convert(p0)
  e = f32[16,128] exponential(f)
  h = bf16[16,128] convert(e)
  k = bf16[] constant(0.5)
  kb = bf16[16,128] broadcast(k), dimensions={}
  ROOT m = bf16[16,128] multiply(h, kb)
)";
  auto b = run_both(fusion_module("kLoop", "bf16[16,128]", "bf16[16,128]", body), "bf16.hlo", random_init(5));
  expect_close(b, 1e-2);
}

TEST_F(GeneratedFusions, RowColumnAndMultiOutputReductions) {
  const std::string body = R"(  p0 = f32[96,160] parameter(0)
  z = f32[] constant(0)
  ninf = f32[] constant(-inf)
  rows = f32[96] reduce(p0, z), dimensions={1}, to_apply=add
  cols = f32[160] reduce(p0, z), dimensions={0}, to_apply=add
  mx = f32[96] reduce(p0, ninf), dimensions={1}, to_apply=max
  scale = f32[] constant(0.5)
  sb = f32[96] broadcast(scale), dimensions={}
  epi = f32[96] multiply(mx, sb)
  e = f32[96,160] exponential(p0)
  ROOT t = (f32[96], f32[160], f32[96], f32[96,160]) tuple(rows, cols, epi, e)
)";
  auto b = run_both(fusion_module("kInput", "f32[96,160]", "(f32[96], f32[160], f32[96], f32[96,160])", body, kAdd),
                    "reduce.hlo", random_init(6));
  expect_close(b, 1e-5);
}

TEST_F(GeneratedFusions, LayerNormInsideALoopFusion) {
  const std::string body = R"(  p0 = f32[4,256] parameter(0)
  z = f32[] constant(0)
  s = f32[4] reduce(p0, z), dimensions={1}, to_apply=add
  n = f32[] constant(0.00390625)
  nb = f32[4] broadcast(n), dimensions={}
  mean = f32[4] multiply(s, nb)
  mb = f32[4,256] broadcast(mean), dimensions={0}
  d = f32[4,256] subtract(p0, mb)
  sq = f32[4,256] multiply(d, d)
  v = f32[4] reduce(sq, z), dimensions={1}, to_apply=add
  var = f32[4] multiply(v, nb)
  eps = f32[] constant(1e-5)
  eb = f32[4] broadcast(eps), dimensions={}
  ve = f32[4] add(var, eb)
  r = f32[4] rsqrt(ve)
  rb = f32[4,256] broadcast(r), dimensions={0}
  ROOT y = f32[4,256] multiply(d, rb)
)";
  auto b = run_both(fusion_module("kLoop", "f32[4,256]", "f32[4,256]", body, kAdd), "ln.hlo", random_init(7));
  expect_close(b, 1e-5);
}

// Every single-device JAX small dump whose fusions all have a path runs on the cuda backend
// and matches the cpu backend (tolerances of tests/exec/jax_corpus_test.cc).
TEST_F(GeneratedFusions, JaxSmallDumpsMatchCpu) {
  const fs::path dir = fs::path(SL_SOURCE_DIR) / "tests/corpus/jax/small";
  if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir;
  int ran = 0, refused = 0;
  for (const auto& program : fs::directory_iterator(dir)) {
    for (const auto& file : fs::directory_iterator(program.path())) {
      if (file.path().string().find("after_optimizations.txt") == std::string::npos) continue;
      std::ifstream in(file.path());
      std::stringstream text;
      text << in.rdbuf();
      auto module = hlo::parse_program(text.str(), file.path().string());
      ASSERT_TRUE(module.is_ok()) << module.status().message();
      if (module->device_count() > cuda_device_count()) continue;
      SCOPED_TRACE(file.path().string());
      Both b = run_both(text.str(), file.path().string());
      if (!b.status.is_ok() && b.status.message().find("cannot run this fusion") != std::string::npos) {
        ++refused;  // a fusion with no path (docs/codegen.md): not this suite's
        std::printf("refused %s: %s\n", program.path().filename().c_str(), b.status.message().substr(0, 200).c_str());
        continue;
      }
      std::printf("ran %s\n", program.path().filename().c_str());
      const bool bf16 = text.str().find("bf16[") != std::string::npos;
      expect_close(b, bf16 ? 0.05 : 1e-4);
      ++ran;
    }
  }
  RecordProperty("programs_run", ran);
  RecordProperty("programs_refused", refused);
  // Before Triton fusions had a path, 1 of 9 ran on an H200 (adam_update);
  // now only misc_ops and random have fusions with no path (tests/codegen).
  EXPECT_GE(ran, 5) << refused << " refused";
}

}  // namespace
}  // namespace sl::exec
