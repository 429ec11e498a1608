// Bad programs give clear errors, never a crash or a deadlock.

#include <gtest/gtest.h>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::run_hlo;

TEST(Errors, UnknownCustomCallIsRefusedClearly) {
  auto r = run_hlo(R"(HloModule e
ENTRY main {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="my_kernel"
})");
  ASSERT_FALSE(r.status.is_ok());
  EXPECT_NE(r.status.message().find("my_kernel"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("__cublas$gemm"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("test.hlo:4:"), std::string::npos) << r.status.message();
}

// JAX's "Sharding" annotation (before SPMD partitioning) passes its operand
// through; one that changes the shape is still refused.
TEST(Errors, ShardingAnnotationIsTheIdentityAndNothingElse) {
  auto r = run_hlo(R"(HloModule e, num_partitions=2
ENTRY main {
  x = f32[2] constant({3, 4})
  ROOT c = f32[2] custom-call(x), custom_call_target="Sharding", sharding={devices=[2]<=[2]}
})", 1, 2);
  EXPECT_EQ(testing::values_of(r, 0), (std::vector<double>{3, 4}));
  EXPECT_EQ(testing::values_of(r, 1), (std::vector<double>{3, 4}));
  auto reshaped = run_hlo(R"(HloModule e
ENTRY main {
  x = f32[2] constant({3, 4})
  ROOT c = f32[1] custom-call(x), custom_call_target="Sharding"
})");
  EXPECT_FALSE(reshaped.status.is_ok());
}

// Every device fails on the same op, each in its own thread: the error is
// device 0's every time (it was whichever thread got there first, so
// tests/corpus/expected_status.tsv changed from one --update to the next).
TEST(Errors, DevicesFailingAtOnceReportTheLowestDevice) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto r = run_hlo(R"(HloModule e, replica_count=8
ENTRY main {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="opaque"
})", 8);
    ASSERT_FALSE(r.status.is_ok());
    EXPECT_NE(r.status.message().find("device 0:"), std::string::npos) << attempt << ": " << r.status.message();
  }
}

TEST(Errors, OneFailingDeviceDoesNotDeadlockTheOthers) {
  // Replica 0 (devices 0 and 1) fails inside a conditional; the others wait
  // in an all-reduce for it and must be released.
  auto r = run_hlo(R"(HloModule e, replica_count=2, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
bad {
  a = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(a), custom_call_target="opaque"
}
ok {
  a = f32[4] parameter(0)
  ROOT c = f32[4] copy(a)
}
ENTRY main {
  x = f32[4] parameter(0)
  r = u32[] replica-id()
  z = u32[] constant(0)
  p = pred[] compare(r, z), direction=EQ
  y = f32[4] conditional(p, x, x), true_computation=bad, false_computation=ok
  ROOT ar = f32[4] all-reduce(y), channel_id=1, replica_groups={{0,1}}, to_apply=add
})");
  ASSERT_FALSE(r.status.is_ok());
  EXPECT_NE(r.status.message().find("opaque"), std::string::npos) << r.status.message();
}

TEST(Errors, DeviceOutsideEveryReplicaGroup) {
  auto r = run_hlo(R"(HloModule e, replica_count=2
ENTRY main {
  x = f32[4] parameter(0)
  ROOT ag = f32[4] all-gather(x), dimensions={0}, replica_groups={{0}}
})");
  ASSERT_FALSE(r.status.is_ok());
  EXPECT_NE(r.status.message().find("replica_groups"), std::string::npos) << r.status.message();
}

TEST(Errors, ShapeMismatchesAreReported) {
  auto r = run_hlo(R"(HloModule e, replica_count=2
ENTRY main {
  x = f32[3] parameter(0)
  ROOT rs = f32[1] reduce-scatter(x), dimensions={0}, replica_groups={}, to_apply=nothing
})");
  EXPECT_FALSE(r.status.is_ok());
  r = run_hlo(R"(HloModule e
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_FALSE(r.status.is_ok());
  EXPECT_NE(r.status.message().find("dot"), std::string::npos) << r.status.message();
}

TEST(Errors, HugeArraysAreRefusedBeforeAllocating) {
  auto r = run_hlo(R"(HloModule e
ENTRY main {
  c = f32[] constant(1)
  ROOT b = f32[16384,16384] broadcast(c), dimensions={}
})");
  ASSERT_FALSE(r.status.is_ok());
  EXPECT_NE(r.status.message().find("too large for the cpu backend"), std::string::npos) << r.status.message();
  r = run_hlo("HloModule e\nENTRY main {\n  ROOT p = bf16[8192,16384] parameter(0)\n}\n");
  ASSERT_FALSE(r.status.is_ok());
  EXPECT_NE(r.status.message().find("too large for the cpu backend"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("test.hlo:3:8: error: parameter(0) 'p'"), std::string::npos)
      << r.status.message();
}

TEST(Errors, EndlessWhileStopsAtTheIterationLimit) {
  const char* text = R"(HloModule e
cond {
  p = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(p, one)
}
ENTRY main {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
})";
  RunOptions options;
  options.cpu_max_while_iterations = 1000;
  auto r = run_hlo(text, 0, 0, options);
  ASSERT_FALSE(r.status.is_ok());
  EXPECT_NE(r.status.message().find("test.hlo:13:8: error:"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("1000 iterations"), std::string::npos) << r.status.message();
}

TEST(Errors, BadDeviceCount) {
  auto module = hlo::parse_program("HloModule e\nENTRY main {\n  ROOT x = f32[] constant(1)\n}\n", "t.hlo");
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto out = run_cpu(*module, 100000, 1, {});
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kUsage);
}

TEST(Backend, RunUsesTheLoweredProgramsDeviceCounts) {
  auto module = hlo::parse_program("HloModule e\nENTRY main {\n  ROOT r = u32[] replica-id()\n}\n", "t.hlo");
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  sched::LoweredProgram program;
  program.module = &*module;
  program.replica_count = 3;
  program.num_partitions = 1;
  auto backend = make_cpu_backend();
  EXPECT_EQ(backend->name(), "cpu");
  RunOptions options;
  options.collect_results = true;
  auto out = backend->run(program, options);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ(out->results.size(), 3u);
  EXPECT_EQ(out->results[2].outputs[0].values, (std::vector<double>{2}));
  EXPECT_EQ(out->results[2].replica, 2);
}

}  // namespace
}  // namespace sl::exec
