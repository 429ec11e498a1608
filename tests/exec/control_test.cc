// call, while, conditional, fusion, async calls, replica/partition ids, and
// the trace the CPU backend records.

#include <gtest/gtest.h>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::run_hlo;
using testing::values_of;

using V = std::vector<double>;

TEST(Control, WhileEvaluatesItsCondition) {
  const char* text = R"(HloModule w
cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  s = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  s1 = s32[] add(s, i)
  ROOT t = (s32[], s32[]) tuple(i1, s1)
}
ENTRY main {
  z = s32[] constant(0)
  t = (s32[], s32[]) tuple(z, z)
  w = (s32[], s32[]) while(t), condition=cond, body=body, backend_config={"known_trip_count":{"n":"5"}}
  ROOT s = s32[] get-tuple-element(w), index=1
})";
  auto r = run_hlo(text);
  EXPECT_EQ(values_of(r), (V{10}));
  // Per iteration: compare, two adds; plus the final compare.
  int compares = 0, adds = 0;
  for (const trace::Event& e : r.output.trace.events) {
    std::string n = r.output.trace.name_of(e);
    compares += n == "c";
    adds += n == "i1" || n == "s1";
  }
  EXPECT_EQ(compares, 6);
  EXPECT_EQ(adds, 10);
}

TEST(Control, CallAndFusion) {
  const char* text = R"(HloModule c
sq {
  a = f32[3] parameter(0)
  ROOT m = f32[3] multiply(a, a)
}
f {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT s = f32[3] subtract(a, b)
}
ENTRY main {
  x = f32[3] constant({1, 2, 3})
  y = f32[3] constant({1, 1, 1})
  c = f32[3] call(x), to_apply=sq
  ROOT d = f32[3] fusion(c, y), kind=kLoop, calls=f
})";
  auto r = run_hlo(text);
  EXPECT_EQ(values_of(r), (V{0, 3, 8}));
  // The call's body is traced instruction by instruction; the fusion is one event.
  ASSERT_EQ(r.output.trace.events.size(), 2u);
  EXPECT_EQ(r.output.trace.name_of(r.output.trace.events[0]), "m");
  EXPECT_EQ(r.output.trace.name_of(r.output.trace.events[1]), "d");
}

TEST(Control, ConditionalPredAndIndex) {
  const char* text = R"(HloModule c
neg {
  a = s32[2] parameter(0)
  ROOT n = s32[2] negate(a)
}
dbl {
  a = s32[2] parameter(0)
  ROOT d = s32[2] add(a, a)
}
idn {
  a = s32[2] parameter(0)
  ROOT c = s32[2] copy(a)
}
ENTRY main {
  x = s32[2] constant({3, -4})
  t = pred[] constant(true)
  f = pred[] constant(false)
  a = s32[2] conditional(t, x, x), true_computation=neg, false_computation=dbl
  b = s32[2] conditional(f, x, x), true_computation=neg, false_computation=dbl
  i1 = s32[] constant(1)
  i9 = s32[] constant(9)
  c = s32[2] conditional(i1, x, x, x), branch_computations={neg, dbl, idn}
  d = s32[2] conditional(i9, x, x, x), branch_computations={neg, dbl, idn}
  ROOT r = (s32[2], s32[2], s32[2], s32[2]) tuple(a, b, c, d)
})";
  auto r = run_hlo(text);
  EXPECT_EQ(values_of(r, 0, 0), (V{-3, 4}));
  EXPECT_EQ(values_of(r, 0, 1), (V{6, -8}));
  EXPECT_EQ(values_of(r, 0, 2), (V{6, -8}));
  EXPECT_EQ(values_of(r, 0, 3), (V{3, -4}));  // out of range -> last branch
}

TEST(Control, AsyncCallOnAStreamAndIds) {
  const char* text = R"(HloModule a, replica_count=2, num_partitions=3
mm {
  a = f32[2,2] parameter(0)
  ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY main {
  x = f32[2,2] constant({{1, 2}, {3, 4}})
  s = ((f32[2,2]), f32[2,2], s32[]) call-start(x), to_apply=mm, backend_config={"operation_queue_id":"2"}
  e = f32[2,2] call-done(s)
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (f32[2,2], u32[], u32[]) tuple(e, r, p)
})";
  auto r = run_hlo(text);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  ASSERT_EQ(r.output.results.size(), 6u);
  for (size_t g = 0; g < 6; ++g) {
    EXPECT_EQ(values_of(r, g, 0), (V{7, 10, 15, 22}));
    EXPECT_EQ(values_of(r, g, 1), (V{static_cast<double>(g / 3)}));
    EXPECT_EQ(values_of(r, g, 2), (V{static_cast<double>(g % 3)}));
  }
  bool saw_gemm = false;
  for (const trace::Event& e : r.output.trace.events) {
    if (e.kind != trace::EventKind::kGemm) continue;
    saw_gemm = true;
    EXPECT_EQ(e.stream, 2);
    EXPECT_EQ(r.output.trace.instruction_of(e), "s");
    EXPECT_EQ(e.flops, 2 * 2 * 2 * 2);
  }
  EXPECT_TRUE(saw_gemm);
}

TEST(Control, StreamAnnotationOnCallAndOperationQueueId) {
  const char* text = R"(HloModule a
f {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
ENTRY main {
  x = f32[4] parameter(0)
  c = f32[4] call(x), to_apply=f, frontend_attributes={_xla_stream_annotation="1"}
  ROOT m = f32[4] multiply(c, c), backend_config={"operation_queue_id":"3"}
})";
  auto r = run_hlo(text);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  ASSERT_EQ(r.output.trace.events.size(), 2u);
  const auto& t = r.output.trace;
  EXPECT_EQ(t.events[0].stream, 1);
  EXPECT_EQ(t.instruction_of(t.events[0]), "c");
  EXPECT_EQ(t.events[1].stream, 3);
  EXPECT_EQ(t.events[0].start_ns, 0);  // times count from the run's first event
  EXPECT_LE(t.events[0].end_ns, t.events[1].start_ns);
  EXPECT_EQ(t.events[1].kind, trace::EventKind::kElementwise);
  EXPECT_EQ(t.events[1].bytes, 3 * 16);
  // ramp: p0 on device 0 = i - 5 -> negate -> square
  EXPECT_EQ(values_of(r), (V{25, 16, 9, 4}));
}

TEST(Control, IterationsAndWarmupTagEvents) {
  RunOptions options;
  options.warmup = 2;
  options.iterations = 3;
  auto r = run_hlo("HloModule i\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(x)\n}\n", 0, 0,
                   options);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  ASSERT_EQ(r.output.trace.events.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.output.trace.events[static_cast<size_t>(i)].iteration, i);
  EXPECT_EQ(values_of(r), (V{5, 4}));
}

TEST(Control, RandomInitIsDeterministic) {
  RunOptions options;
  options.init = InitMode::kRandom;
  options.seed = 11;
  const char* text = "HloModule i, replica_count=2\nENTRY main {\n  x = f32[8] parameter(0)\n  ROOT c = f32[8] copy(x)\n}\n";
  auto a = run_hlo(text, 0, 0, options);
  auto b = run_hlo(text, 0, 0, options);
  EXPECT_EQ(values_of(a, 0), values_of(b, 0));
  EXPECT_NE(values_of(a, 0), values_of(a, 1));
  EXPECT_EQ(values_of(a, 1), random_literal(hlo::Shape::array(hlo::PrimitiveType::kF32, {8}), 11, 1, 0).values);
}

}  // namespace
}  // namespace sl::exec
