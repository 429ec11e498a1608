// Collectives in every group mode on 2 replicas x 2 partitions (devices
// g = r*2 + p). Parameter 0 is f32[2] with the ramp init:
//   g0: [-5,-4]  g1: [2,3]  g2: [-2,-1]  g3: [5,-5]
// Parameter 1 (s32[1]): g0: [-2]  g1: [5]  g2: [1]  g3: [-3]

#include <gtest/gtest.h>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::run_hlo;
using testing::shape_of;
using testing::values_of;

using V = std::vector<double>;

const char* kAddF32 = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

std::string module(const std::string& body, const std::string& params = "  x = f32[2] parameter(0)\n") {
  return std::string("HloModule c, replica_count=2, num_partitions=2\n") + kAddF32 + "ENTRY main {\n" + params +
         body + "\n}\n";
}

void expect_devices(const testing::Ran& r, const std::vector<V>& per_device, size_t leaf = 0) {
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  ASSERT_EQ(r.output.results.size(), per_device.size());
  for (size_t g = 0; g < per_device.size(); ++g) {
    EXPECT_EQ(values_of(r, g, leaf), per_device[g]) << "device " << g << " leaf " << leaf;
    EXPECT_EQ(r.output.results[g].replica, static_cast<int64_t>(g / 2));
    EXPECT_EQ(r.output.results[g].partition, static_cast<int64_t>(g % 2));
  }
}

TEST(AllGather, CrossReplica) {
  auto r = run_hlo(module("  ROOT ag = f32[4] all-gather(x), dimensions={0}, replica_groups={}"));
  expect_devices(r, {{-5, -4, -2, -1}, {2, 3, 5, -5}, {-5, -4, -2, -1}, {2, 3, 5, -5}});
}

TEST(AllGather, CrossReplicaAndPartition) {
  auto r = run_hlo(module("  ROOT ag = f32[8] all-gather(x), channel_id=1, dimensions={0}, replica_groups={{0,1}}"));
  V all{-5, -4, 2, 3, -2, -1, 5, -5};
  expect_devices(r, {all, all, all, all});
  r = run_hlo(module("  ROOT ag = f32[4] all-gather(x), channel_id=1, dimensions={0}, replica_groups={{0},{1}}, "
                     "use_global_device_ids=false"));
  expect_devices(r, {{-5, -4, 2, 3}, {-5, -4, 2, 3}, {-2, -1, 5, -5}, {-2, -1, 5, -5}});
}

TEST(AllGather, FlattenedIdsInGroupOrder) {
  auto r = run_hlo(module("  ROOT ag = f32[4] all-gather(x), channel_id=1, dimensions={0}, "
                          "replica_groups={{0,3},{2,1}}, use_global_device_ids=true"));
  expect_devices(r, {{-5, -4, 5, -5}, {-2, -1, 2, 3}, {-2, -1, 2, 3}, {-5, -4, 5, -5}});
}

TEST(AllGather, AlongAnInnerDimension) {
  auto r = run_hlo(module("  y = f32[2,1] reshape(x)\n"
                          "  ROOT ag = f32[2,2] all-gather(y), dimensions={1}, replica_groups={{0,1}}"));
  // Cross-replica: g0 with g2 -> [[-5,-2],[-4,-1]].
  expect_devices(r, {{-5, -2, -4, -1}, {2, 5, 3, -5}, {-5, -2, -4, -1}, {2, 5, 3, -5}});
}

TEST(AllGather, TupleWithMixedTypes) {
  auto r = run_hlo(module("  ROOT ag = (f32[4], s32[2]) all-gather(x, y), dimensions={0}, replica_groups={}",
                          "  x = f32[2] parameter(0)\n  y = s32[1] parameter(1)\n"));
  expect_devices(r, {{-5, -4, -2, -1}, {2, 3, 5, -5}, {-5, -4, -2, -1}, {2, 3, 5, -5}}, 0);
  expect_devices(r, {{-2, 1}, {5, -3}, {-2, 1}, {5, -3}}, 1);
  EXPECT_EQ(shape_of(r, 0, 1), "s32[2]");
}

TEST(AllGather, TupleAlongAnInnerDimension) {
  auto r = run_hlo(module("  a = f32[2,1] reshape(x)\n"
                          "  xi = s32[2] convert(x)\n"
                          "  ni = s32[2] negate(xi)\n"
                          "  b = s32[2,1] reshape(ni)\n"
                          "  ROOT ag = (f32[2,2], s32[2,2]) all-gather(a, b), dimensions={1}, replica_groups={{0,1}}"));
  // Cross-replica: g0 with g2, g1 with g3; each row takes one element of each member, in group order.
  // Leaf 0: g0 [[-5],[-4]] + g2 [[-2],[-1]] -> [[-5,-2],[-4,-1]].
  expect_devices(r, {{-5, -2, -4, -1}, {2, 5, 3, -5}, {-5, -2, -4, -1}, {2, 5, 3, -5}}, 0);
  // Leaf 1: -x as s32: g0 [[5],[4]] + g2 [[2],[1]] -> [[5,2],[4,1]]; g1 [[-2],[-3]] + g3 [[-5],[5]].
  expect_devices(r, {{5, 2, 4, 1}, {-2, -5, -3, 5}, {5, 2, 4, 1}, {-2, -5, -3, 5}}, 1);
  EXPECT_EQ(shape_of(r, 0, 0), "f32[2,2]");
  EXPECT_EQ(shape_of(r, 0, 1), "s32[2,2]");
}

TEST(AllReduce, CrossReplicaAndFlattened) {
  auto r = run_hlo(module("  ROOT ar = f32[2] all-reduce(x), replica_groups={}, to_apply=add"));
  expect_devices(r, {{-7, -5}, {7, -2}, {-7, -5}, {7, -2}});
  r = run_hlo(module("  ROOT ar = f32[2] all-reduce(x), channel_id=2, replica_groups={{0,3},{1,2}}, "
                     "use_global_device_ids=true, to_apply=add"));
  expect_devices(r, {{0, -9}, {0, 2}, {0, 2}, {0, -9}});
  r = run_hlo(module("  ROOT ar = f32[2] all-reduce(x), channel_id=2, replica_groups={{0,1}}, to_apply=add"));
  expect_devices(r, {{0, -7}, {0, -7}, {0, -7}, {0, -7}});
}

TEST(AllReduce, TupleAndMaximum) {
  std::string text = std::string("HloModule c, replica_count=2, num_partitions=2\n") +
                     "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
                     "ENTRY main {\n  x = f32[2] parameter(0)\n  y = f32[2] negate(x)\n"
                     "  ROOT ar = (f32[2], f32[2]) all-reduce(x, y), replica_groups=[1,2]<=[2], to_apply=mx\n}\n";
  auto r = run_hlo(text);
  expect_devices(r, {{-2, -1}, {5, 3}, {-2, -1}, {5, 3}}, 0);
  expect_devices(r, {{5, 4}, {-2, 5}, {5, 4}, {-2, 5}}, 1);
}

TEST(ReduceScatter, EveryMemberGetsItsSlice) {
  auto r = run_hlo(module("  ROOT rs = f32[1] reduce-scatter(x), dimensions={0}, replica_groups={}, to_apply=add"));
  expect_devices(r, {{-7}, {7}, {-5}, {-2}});
  // Iota groups [2,2]<=[4] = {{0,1},{2,3}} of flattened ids.
  r = run_hlo(module("  ROOT rs = f32[1] reduce-scatter(x), channel_id=3, dimensions={0}, "
                     "replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=add"));
  expect_devices(r, {{-3}, {-1}, {3}, {-6}});
  // Transposed iota [2,2]<=[2,2]T(1,0) = {{0,2},{1,3}}.
  r = run_hlo(module("  ROOT rs = f32[1] reduce-scatter(x), channel_id=3, dimensions={0}, "
                     "replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, to_apply=add"));
  expect_devices(r, {{-7}, {7}, {-5}, {-2}});
}

TEST(ReduceScatter, Tuple) {
  auto r = run_hlo(module("  y = f32[2] add(x, x)\n"
                          "  ROOT rs = (f32[1], f32[1]) reduce-scatter(x, y), dimensions={0}, replica_groups={}, "
                          "to_apply=add"));
  expect_devices(r, {{-7}, {7}, {-5}, {-2}}, 0);
  expect_devices(r, {{-14}, {14}, {-10}, {-4}}, 1);
}

TEST(CollectivePermute, CrossReplicaGivesZerosToNonReceivers) {
  auto r = run_hlo(module("  ROOT cp = f32[2] collective-permute(x), source_target_pairs={{0,1}}"));
  expect_devices(r, {{0, 0}, {0, 0}, {-5, -4}, {2, 3}});
}

TEST(CollectivePermute, CrossPartitionSwap) {
  auto r = run_hlo(module("  ROOT cp = f32[2] collective-permute(x), channel_id=5, source_target_pairs={{0,1},{1,0}}"));
  expect_devices(r, {{2, 3}, {-5, -4}, {5, -5}, {-2, -1}});
}

// The first device of each group broadcasts (XLA's collective_ops_e2e_test
// AsyncCollectiveBroadcast expects {11, 11} on both replicas of group {1,0}).
TEST(CollectiveBroadcast, FirstOfEachGroupBroadcasts) {
  auto xla = run_hlo(R"(HloModule test, replica_count=2
ENTRY test_computation {
  replica = u32[] replica-id()
  ten = u32[] constant(10)
  sum = u32[] add(replica, ten)
  p = u32[2] broadcast(sum), dimensions={}
  bcast = u32[2] collective-broadcast(p), replica_groups={{1, 0}}
  ROOT res = u32[2] copy(bcast)
})");
  EXPECT_EQ(values_of(xla, 0), (V{11, 11}));
  EXPECT_EQ(values_of(xla, 1), (V{11, 11}));
  // Cross-replica groups {1,0} within each partition: replica 1's operand.
  auto r = run_hlo(module("  ROOT cb = f32[2] collective-broadcast(x), replica_groups={{1,0}}"));
  expect_devices(r, {{-2, -1}, {5, -5}, {-2, -1}, {5, -5}});
}

// In place: replica 0's [2,1] slice of ones lands in replica 1's output at
// (0, 2); replica 0 receives nothing and keeps its output operand.
TEST(CollectivePermute, InPlaceSliceLandsAtTheOutputOffsets) {
  auto r = run_hlo(R"(HloModule t, replica_count=2
ENTRY main {
  id = u32[] replica-id()
  idf = f32[] convert(id)
  one = f32[] constant(1)
  v = f32[] add(idf, one)
  input = f32[2,2] broadcast(v), dimensions={}
  seven = f32[] constant(7)
  output = f32[2,4] broadcast(seven), dimensions={}
  c0 = s32[] constant(0)
  c2 = s32[] constant(2)
  in_off = (s32[], s32[]) tuple(c0, c0)
  out_off = (s32[], s32[]) tuple(c0, c2)
  ROOT cp = f32[2,4] collective-permute(input, output, in_off, out_off), source_target_pairs={{0,1}}, slice_sizes={{2,1}}
})");
  EXPECT_EQ(values_of(r, 0), (V{7, 7, 7, 7, 7, 7, 7, 7}));
  EXPECT_EQ(values_of(r, 1), (V{7, 7, 1, 7, 7, 7, 1, 7}));
}

TEST(AsyncCollectives, SugaredStartsAndDones) {
  auto r = run_hlo(module(
      "  ags = (f32[2], f32[4]) all-gather-start(x), dimensions={0}, replica_groups={}\n"
      "  agd = f32[4] all-gather-done(ags)\n"
      "  ars = f32[2] all-reduce-start(x), replica_groups={}, to_apply=add\n"
      "  ard = f32[2] all-reduce-done(ars)\n"
      "  cps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(x), source_target_pairs={{1,0}}\n"
      "  cpd = f32[2] collective-permute-done(cps)\n"
      "  rss = ((f32[2]), f32[1]) reduce-scatter-start(x), dimensions={0}, replica_groups={}, to_apply=add\n"
      "  rsd = f32[1] reduce-scatter-done(rss)\n"
      "  ROOT t = (f32[4], f32[2], f32[2], f32[1]) tuple(agd, ard, cpd, rsd)"));
  expect_devices(r, {{-5, -4, -2, -1}, {2, 3, 5, -5}, {-5, -4, -2, -1}, {2, 3, 5, -5}}, 0);
  expect_devices(r, {{-7, -5}, {7, -2}, {-7, -5}, {7, -2}}, 1);
  expect_devices(r, {{-2, -1}, {5, -5}, {0, 0}, {0, 0}}, 2);
  expect_devices(r, {{-7}, {7}, {-5}, {-2}}, 3);
  // Async collectives run on the communication stream, attributed to the start.
  int comm = 0;
  for (const trace::Event& e : r.output.trace.events) {
    EXPECT_EQ(e.stream, sched::kCommStreamBase);
    EXPECT_EQ(e.kind, trace::EventKind::kCollective);
    std::string name = r.output.trace.instruction_of(e);
    EXPECT_TRUE(name == "ags" || name == "ars" || name == "cps" || name == "rss") << name;
    ++comm;
  }
  EXPECT_EQ(comm, 16);
}

TEST(AsyncCollectives, ExplicitAsyncStartWithCalls) {
  std::string text = std::string("HloModule c, replica_count=2, num_partitions=2\n") +
                     "agc {\n  p = f32[2] parameter(0)\n"
                     "  ROOT ag = f32[4] all-gather(p), dimensions={0}, replica_groups={}\n}\n"
                     "ENTRY main {\n  x = f32[2] parameter(0)\n"
                     "  s = ((f32[2]), f32[4], s32[]) async-start(x), calls=agc\n"
                     "  ROOT d = f32[4] async-done(s), calls=agc\n}\n";
  auto r = run_hlo(text);
  expect_devices(r, {{-5, -4, -2, -1}, {2, 3, 5, -5}, {-5, -4, -2, -1}, {2, 3, 5, -5}});
  ASSERT_EQ(r.output.trace.events.size(), 4u);
  for (const trace::Event& e : r.output.trace.events) {
    EXPECT_EQ(e.stream, sched::kCommStreamBase);
    EXPECT_EQ(r.output.trace.instruction_of(e), "s");
    EXPECT_EQ(r.output.trace.name_of(e), "ag");
  }
}

TEST(Collectives, InsideAWhileLoopMeetPerOccurrence) {
  std::string text = std::string("HloModule c, replica_count=2\n") + kAddF32 +
                     "cond {\n  p = (s32[], f32[2]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
                     "  n = s32[] constant(3)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
                     "body {\n  p = (s32[], f32[2]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
                     "  x = f32[2] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n"
                     "  i1 = s32[] add(i, one)\n  y = f32[2] all-reduce(x), replica_groups={}, to_apply=add\n"
                     "  ROOT t = (s32[], f32[2]) tuple(i1, y)\n}\n"
                     "ENTRY main {\n  x = f32[2] parameter(0)\n  z = s32[] constant(0)\n"
                     "  t = (s32[], f32[2]) tuple(z, x)\n"
                     "  w = (s32[], f32[2]) while(t), condition=cond, body=body\n"
                     "  ROOT y = f32[2] get-tuple-element(w), index=1\n}\n";
  auto r = run_hlo(text);
  // Devices g0 [-5,-4] and g1 [2,3] (1 partition): -3,-1 -> -6,-2 -> -12,-4.
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_EQ(values_of(r, 0), (V{-12, -4}));
  EXPECT_EQ(values_of(r, 1), (V{-12, -4}));
}

}  // namespace
}  // namespace sl::exec

namespace sl::exec {
namespace {

TEST(AllToAll, ArrayFormSplitsAndConcatenates) {
  // Cross-replica groups {g0, g2} and {g1, g3}: chunk i of member j goes to member i.
  auto r = run_hlo(module("  ROOT a = f32[2] all-to-all(x), dimensions={0}, replica_groups={}"));
  expect_devices(r, {{-5, -2}, {2, 5}, {-4, -1}, {3, -5}});
}

TEST(AllToAll, TupleFormSendsOperandIToMemberI) {
  auto r = run_hlo(module("  y = f32[2] add(x, x)\n"
                          "  ROOT a = (f32[2], f32[2]) all-to-all(x, y), replica_groups={}"));
  expect_devices(r, {{-5, -4}, {2, 3}, {-10, -8}, {4, 6}}, 0);
  expect_devices(r, {{-2, -1}, {5, -5}, {-4, -2}, {10, -10}}, 1);
}

}  // namespace
}  // namespace sl::exec
