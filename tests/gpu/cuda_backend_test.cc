// The cuda backend against the cpu reference (docs/architecture.md). Skips
// cleanly without a GPU; on a GPU every op and every small sample that fits
// the visible devices must give the cpu backend's results (exact for data
// movement and integers, a tolerance for GEMMs and transcendental ops).
#include "core/exec/cuda/cuda_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "core/exec/cpu/cpu_backend.h"
#include "core/hlo/parser.h"
#include "core/sched/lowering.h"
#include "tests/gpu/cuda_test_util.h"

namespace sl::exec {
namespace {

using namespace gpu_test;

TEST(CudaBackendNoGpu, ReportsNoGpuAsRuntimeError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  auto backend = make_cuda_backend({});
  ASSERT_FALSE(backend.is_ok());
  EXPECT_EQ(backend.status().code(), ErrorCode::kRuntime);
  EXPECT_EQ(backend.status().message().rfind("no GPU: ", 0), 0u) << backend.status().message();
}

TEST_F(CudaTest, FloatElementwise) {
  expect_same(run_both(R"(HloModule m
ENTRY e {
  a = f32[4,5] parameter(0)
  b = f32[4,5] parameter(1)
  add = f32[4,5] add(a, b)
  sub = f32[4,5] subtract(a, b)
  mul = f32[4,5] multiply(a, b)
  div = f32[4,5] divide(a, b)
  mx = f32[4,5] maximum(a, b)
  mn = f32[4,5] minimum(a, b)
  neg = f32[4,5] negate(a)
  ab = f32[4,5] abs(a)
  rem = f32[4,5] remainder(a, b)
  lt = pred[4,5] compare(a, b), direction=LT
  sel = f32[4,5] select(lt, a, b)
  ROOT t = (f32[4,5], f32[4,5], f32[4,5], f32[4,5], f32[4,5], f32[4,5], f32[4,5], f32[4,5], f32[4,5], pred[4,5], f32[4,5]) tuple(add, sub, mul, div, mx, mn, neg, ab, rem, lt, sel)
})"));
}

// Parameters are filled on the device (no host copy of large weights); every
// element type must get exactly the host's ramp and random values.
TEST_F(CudaTest, ParametersInitialisedOnDeviceMatchHost) {
  const char* text = R"(HloModule m
ENTRY e {
  p = pred[37] parameter(0)
  a = s8[37] parameter(1)
  b = s32[37] parameter(2)
  c = u32[37] parameter(3)
  d = s64[37] parameter(4)
  h = f16[37] parameter(5)
  g = bf16[37] parameter(6)
  f = f32[1000] parameter(7)
  x = f64[37] parameter(8)
  ROOT t = (pred[37], s8[37], s32[37], u32[37], s64[37], f16[37], bf16[37], f32[1000], f64[37]) tuple(p, a, b, c, d, h, g, f, x)
})";
  expect_same(run_both(text));
  expect_same(run_both(text, random_init(1234567)));
}

TEST_F(CudaTest, ExpWithinTolerance) {
  expect_same(run_both(R"(HloModule m
ENTRY e {
  a = f32[64] parameter(0)
  ROOT x = f32[64] exponential(a)
})", random_init(7)), 1e-6);
}

TEST_F(CudaTest, IntegerElementwiseAndNarrowFloats) {
  expect_same(run_both(R"(HloModule m
ENTRY e {
  a = s32[3,4] parameter(0)
  b = s32[3,4] parameter(1)
  add = s32[3,4] add(a, b)
  div = s32[3,4] divide(a, b)
  rem = s32[3,4] remainder(a, b)
  an = s32[3,4] and(a, b)
  o = s32[3,4] or(a, b)
  eq = pred[3,4] compare(a, b), direction=GE
  h = bf16[3,4] parameter(2)
  hh = bf16[3,4] multiply(h, h)
  f = f16[3,4] convert(hh)
  ROOT t = (s32[3,4], s32[3,4], s32[3,4], s32[3,4], s32[3,4], pred[3,4], bf16[3,4], f16[3,4]) tuple(add, div, rem, an, o, eq, hh, f)
})"));
}

TEST_F(CudaTest, DataMovement) {
  expect_same(run_both(R"(HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  i = s32[] parameter(1)
  u = f32[2,2,2] parameter(2)
  tr = f32[4,2,3] transpose(a), dimensions={2,0,1}
  bc = f32[2,5,3,4] broadcast(a), dimensions={0,2,3}
  sl = f32[1,2,2] slice(a), slice={[1:2], [0:3:2], [1:4:2]}
  c = f32[2,3,8] concatenate(a, a), dimensions={2}
  r = f32[6,4] reshape(a)
  cp = f32[6,4] copy(r)
  io = s32[3,5] iota(), iota_dimension=1
  cv = s32[2,3,4] convert(a)
  ds = f32[2,2,2] dynamic-slice(a, i, i, i), dynamic_slice_sizes={2,2,2}
  dus = f32[2,3,4] dynamic-update-slice(a, u, i, i, i)
  k = f32[2] constant({1.5, -2})
  ROOT t = (f32[4,2,3], f32[2,5,3,4], f32[1,2,2], f32[2,3,8], f32[6,4], s32[3,5], s32[2,3,4], f32[2,2,2], f32[2,3,4], f32[2]) tuple(tr, bc, sl, c, cp, io, cv, ds, dus, k)
})"));
}

// The fast paths (fast_paths.cu): float-family elementwise ops and converts
// in 16-byte packs with a scalar tail ([7,13] = 91 elements), same-type
// copies of rows with dynamic starts, and scalar broadcasts. Exact where one
// rounding gives the result on both backends.
TEST_F(CudaTest, FastPathsMatchCpuExactly) {
  expect_same(run_both(R"(HloModule m
ENTRY e {
  a = f32[7,13] parameter(0)
  b = f32[7,13] parameter(1)
  h = bf16[64,40] parameter(2)
  g = f16[7,13] parameter(3)
  i = s32[] parameter(4)
  s = bf16[] parameter(5)
  k = s8[] parameter(6)
  add = f32[7,13] add(a, b)
  sub = f32[7,13] subtract(a, b)
  mul = f32[7,13] multiply(a, b)
  div = f32[7,13] divide(a, b)
  mx = f32[7,13] maximum(a, b)
  neg = f32[7,13] negate(a)
  f2b = bf16[7,13] convert(a)
  f2h = f16[7,13] convert(b)
  b2f = f32[64,40] convert(h)
  h2b = bf16[7,13] convert(g)
  habs = bf16[64,40] abs(h)
  gmn = f16[7,13] minimum(g, g)
  rows = bf16[8,40] dynamic-slice(h, i, i), dynamic_slice_sizes={8,40}
  upd = bf16[64,40] dynamic-update-slice(h, rows, i, i)
  bs = bf16[9,7] broadcast(s), dimensions={}
  bk = s8[33] broadcast(k), dimensions={}
  ROOT t = (f32[7,13], f32[7,13], f32[7,13], f32[7,13], f32[7,13], f32[7,13], bf16[7,13], f16[7,13], f32[64,40], bf16[7,13], bf16[64,40], f16[7,13], bf16[8,40], bf16[64,40], bf16[9,7], s8[33]) tuple(add, sub, mul, div, mx, neg, f2b, f2h, b2f, h2b, habs, gmn, rows, upd, bs, bk)
})", random_init(11)));
}

// Narrow-float arithmetic rounds once on the GPU (float, then the type) and
// may round twice on the host: equal within the type's precision.
TEST_F(CudaTest, FastPathNarrowArithmeticWithinTolerance) {
  expect_same(run_both(R"(HloModule m
ENTRY e {
  h = bf16[7,13] parameter(0)
  j = bf16[7,13] parameter(1)
  g = f16[64,40] parameter(2)
  add = bf16[7,13] add(h, j)
  mul = bf16[7,13] multiply(h, j)
  div = bf16[7,13] divide(h, j)
  gsub = f16[64,40] subtract(g, g)
  gmul = f16[64,40] multiply(g, g)
  ROOT t = (bf16[7,13], bf16[7,13], bf16[7,13], f16[64,40], f16[64,40]) tuple(add, mul, div, gsub, gmul)
})", random_init(12)), 1e-2);
}

TEST_F(CudaTest, Reduce) {
  expect_same(run_both(R"(HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
mx { x = s32[] parameter(0)  y = s32[] parameter(1)  ROOT s = s32[] maximum(x, y) }
ENTRY e {
  a = f32[3,4,5] parameter(0)
  z = f32[] constant(0)
  r1 = f32[4] reduce(a, z), dimensions={0,2}, to_apply=add
  b = s32[6,7] parameter(1)
  lo = s32[] constant(-100)
  r2 = s32[6] reduce(b, lo), dimensions={1}, to_apply=mx
  ROOT t = (f32[4], s32[6]) tuple(r1, r2)
})"));
}

TEST_F(CudaTest, GemmsAllLayouts) {
  expect_same(run_both(R"(HloModule m
ENTRY e {
  a = f32[32,48] parameter(0)
  b = f32[48,40] parameter(1)
  bt = f32[40,48] parameter(2)
  at = f32[48,32] parameter(3)
  d0 = f32[32,40] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[32,40] dot(a, bt), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  d2 = f32[32,40] dot(at, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  x = f32[3,8,16] parameter(4)
  y = f32[3,16,4] parameter(5)
  d3 = f32[3,8,4] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  i = s32[4,6] parameter(6)
  j = s32[6,2] parameter(7)
  d4 = s32[4,2] dot(i, j), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[32,40], f32[32,40], f32[32,40], f32[3,8,4], s32[4,2]) tuple(d0, d1, d2, d3, d4)
})", random_init(3)), 1e-5);
}

TEST_F(CudaTest, Bf16GemmWithinBf16Tolerance) {
  expect_same(run_both(R"(HloModule m
ENTRY e {
  a = bf16[64,256] parameter(0)
  b = bf16[256,128] parameter(1)
  d = bf16[64,128] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  f = f32[64,128] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (bf16[64,128], f32[64,128]) tuple(d, f)
})", random_init(11)), 2e-2);
}

TEST_F(CudaTest, SingleDeviceCollectivesThroughNccl) {
  expect_same(run_both(R"(HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[4,6] parameter(0)
  b = bf16[8] parameter(1)
  ag = (f32[4,6], bf16[8]) all-gather(a, b), dimensions={0}, replica_groups={{0}}
  ar = f32[4,6] all-reduce(a), to_apply=add, replica_groups={{0}}
  rs = f32[4,6] reduce-scatter(a), dimensions={1}, to_apply=add, replica_groups={{0}}
  ROOT t = ((f32[4,6], bf16[8]), f32[4,6], f32[4,6]) tuple(ag, ar, rs)
})"));
}

TEST_F(CudaTest, TraceAttributesKernelsToInstructionsAndStreams) {
  RunOptions o;
  o.warmup = 1;
  o.iterations = 2;
  Both b = run_both(R"(HloModule m
ENTRY e {
  x0 = f32[256,256] parameter(0)
  x1 = f32[256,256] parameter(1)
  g0 = f32[256,256] dot(x0, x1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g1 = f32[256,256] dot(x1, x0), lhs_contracting_dims={1}, rhs_contracting_dims={0}, backend_config={"operation_queue_id":"1"}
  s = f32[256,256] add(g0, g1)
  ROOT t = (f32[256,256]) tuple(s)
})", o);
  expect_same(b, 1e-5);
  const trace::Trace& t = b.cuda.trace;
  int gemm0 = 0, gemm1 = 0, adds = 0;
  for (const trace::Event& e : t.events) {
    const std::string& inst = t.instruction_of(e);
    EXPECT_GE(e.iteration, 0);
    EXPECT_LT(e.iteration, 2);
    EXPECT_LE(e.start_ns, e.end_ns);
    if (inst == "g0") { ++gemm0; EXPECT_EQ(e.stream, 0); EXPECT_EQ(e.kind, trace::EventKind::kGemm); }
    if (inst == "g1") { ++gemm1; EXPECT_EQ(e.stream, 1); }
    if (inst == "s") { ++adds; EXPECT_EQ(e.stream, 0); }
  }
  EXPECT_GE(gemm0, 2);  // one GEMM kernel (or more) per measured iteration
  EXPECT_GE(gemm1, 2);
  EXPECT_EQ(adds, 2);
  EXPECT_FALSE(t.dependencies.empty());  // s waits for g1's stream
  // The warm-up was tagged; both recorded iterations were attributed by
  // stream order, completely and alike.
  std::map<std::string, int64_t> counters;
  for (const trace::Counter& c : t.counters) counters[c.name] = c.value;
  EXPECT_EQ(counters["records_by_stream_order"], static_cast<int64_t>(t.events.size()));
  EXPECT_EQ(counters.count("records_order_mismatch"), 0u);
  std::map<std::string, int> per_iteration[2];
  for (const trace::Event& e : t.events) ++per_iteration[e.iteration][std::string(t.instruction_of(e))];
  EXPECT_EQ(per_iteration[0], per_iteration[1]);
  // The iterations' host wall time holds everything the GPU recorded in them.
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const trace::Event& e : t.events) first = std::min(first, e.start_ns), last = std::max(last, e.end_ns);
  EXPECT_GE(b.cuda.iterations_wall_ms, (last - first) / 1e6);
}

TEST_F(CudaTest, SmallSamplesMatchCpu) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(SL_SOURCE_DIR) / "samples" / "small";
  if (!fs::exists(dir)) GTEST_SKIP() << "no samples/small";
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".hlo") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto module = hlo::parse_program(text.str(), entry.path().string());
    ASSERT_TRUE(module.is_ok()) << entry.path() << ": " << module.status().message();
    if (module->device_count() > cuda_device_count()) continue;  // needs more GPUs than visible
    SCOPED_TRACE(entry.path().string());
    RunOptions o;
    o.init = InitMode::kRandom;
    o.seed = 5;
    expect_same(run_both(text.str(), o), 1e-5);
    ++ran;
  }
  RecordProperty("samples_run", ran);
}

}  // namespace
}  // namespace sl::exec
