// The edges of a command buffer's CUDA graph (core/exec/cuda/graph_edges.h)
// on hand-built programs: pure logic, runs without a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "core/exec/cuda/graph_edges.h"

namespace sl::exec::cuda {
namespace {

using sched::BufferSlice;
using sched::Thunk;

// A program of kernel thunks, each reading `reads` and writing `writes`.
struct Program {
  std::vector<std::vector<BufferSlice>> slices;  // per thunk: reads then writes
  sched::DeviceProgram dp;
  void add(std::vector<BufferSlice> reads, std::vector<BufferSlice> writes, sched::ThunkKind kind = sched::ThunkKind::kKernel) {
    reads_.push_back(reads.size());
    std::vector<BufferSlice> all = reads;
    all.insert(all.end(), writes.begin(), writes.end());
    slices.push_back(std::move(all));
    kinds_.push_back(kind);
  }
  // Points the thunks at `slices` (after every add).
  const sched::DeviceProgram& build() {
    dp.thunks.clear();
    for (size_t i = 0; i < slices.size(); ++i) {
      Thunk t;
      t.kind = kinds_[i];
      t.operands = std::span<const BufferSlice>(slices[i].data(), reads_[i]);
      t.results = std::span<const BufferSlice>(slices[i].data() + reads_[i], slices[i].size() - reads_[i]);
      dp.thunks.push_back(t);
    }
    return dp;
  }

 private:
  std::vector<size_t> reads_;
  std::vector<sched::ThunkKind> kinds_;
};

sched::CommandBuffer all_of(size_t n, std::vector<std::vector<int>> deps) {
  sched::CommandBuffer g;
  for (size_t i = 0; i < n; ++i) g.thunks.push_back(static_cast<uint32_t>(i));
  g.deps = std::move(deps);
  return g;
}

TEST(GraphEdges, ANodeWaitsForTheReadersOfWhatItOverwrites) {
  Program p;
  p.add({}, {{0, 100}});           // 0: writes A
  p.add({{0, 100}}, {{100, 100}}); // 1: reads A, writes B
  p.add({}, {{0, 100}});           // 2: reuses A's memory; XLA's DAG has it after 0 only
  const GraphEdges e = graph_edges(p.build(), all_of(3, {{}, {0}, {0}}), nullptr);
  EXPECT_EQ(e.deps[2], (std::vector<int>{0, 1}));
  EXPECT_EQ(e.hazard_edges, 1);
  EXPECT_EQ(e.xla_edges, 2);
}

TEST(GraphEdges, DisjointNodesStayIndependent) {
  Program p;
  p.add({{1000, 8}}, {{0, 100}});
  p.add({{1000, 8}}, {{100, 100}});
  const GraphEdges e = graph_edges(p.build(), all_of(2, {{}, {}}), nullptr);
  EXPECT_TRUE(e.deps[0].empty());
  EXPECT_TRUE(e.deps[1].empty());  // two readers of one range need no edge
}

TEST(GraphEdges, PartialOverlapsAreHazards) {
  Program p;
  p.add({}, {{0, 100}});
  p.add({{50, 10}}, {{200, 10}});
  p.add({}, {{90, 20}});  // overlaps 0's tail: after 0 (and not after 1)
  const GraphEdges e = graph_edges(p.build(), all_of(3, {{}, {}, {}}), nullptr);
  EXPECT_EQ(e.deps[1], (std::vector<int>{0}));
  EXPECT_EQ(e.deps[2], (std::vector<int>{0}));
}

TEST(GraphEdges, NodesFollowProgramOrderAndBackwardEdgesAreDropped) {
  Program p;
  p.add({}, {{0, 8}});
  p.add({}, {{8, 8}});
  p.add({}, {{16, 8}});
  sched::CommandBuffer g{.thunks = {2, 0, 1}, .deps = {{}, {0}, {1}}};  // thunk 0 after thunk 2: against program order
  const GraphEdges e = graph_edges(p.build(), g, nullptr);
  EXPECT_EQ(e.order, (std::vector<uint32_t>{1, 2, 0}));
  EXPECT_EQ(e.dropped_edges, 1);
  EXPECT_EQ(e.deps[1], (std::vector<int>{0}));  // thunk 1 after thunk 0, as XLA said
  EXPECT_TRUE(e.deps[2].empty());
}

TEST(GraphEdges, UsersOfSharedStateKeepTheirOrder) {
  Program p;
  p.add({}, {{0, 8}}, sched::ThunkKind::kGemm);
  p.add({}, {{8, 8}});
  p.add({}, {{16, 8}}, sched::ThunkKind::kGemm);
  auto shared = [](const Thunk& t) { return t.kind == sched::ThunkKind::kGemm; };
  const GraphEdges e = graph_edges(p.build(), all_of(3, {{}, {}, {}}), shared);
  EXPECT_TRUE(e.deps[1].empty());
  EXPECT_EQ(e.deps[2], (std::vector<int>{0}));
}

TEST(GraphEdges, AChainOfReusedBuffersWaitsOnlyNearby) {
  // a_i = f(a_{i-1}) with three slots reused in turn: each node waits for
  // its producer and the last writer and reader of the slot it overwrites.
  Program p;
  for (int i = 0; i < 30; ++i) {
    const int64_t in = ((i + 2) % 3) * 64, out = (i % 3) * 64;
    p.add({{in, 64}}, {{out, 64}});
  }
  std::vector<std::vector<int>> none(30);
  const GraphEdges e = graph_edges(p.build(), all_of(30, none), nullptr);
  for (int i = 3; i < 30; ++i) EXPECT_EQ(e.deps[static_cast<size_t>(i)], (std::vector<int>{i - 3, i - 2, i - 1})) << i;
}

}  // namespace
}  // namespace sl::exec::cuda
