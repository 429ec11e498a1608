// Records of CUDA graph launches given to the graph's nodes (LaunchInfo::
// graph), on synthetic CUPTI records: no GPU, no CUPTI calls.
#include <cupti_activity.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "cupti_tracer/collector.h"
#include "cupti_tracer/records.h"
#include "tests/cupti/cupti_records.h"

namespace sl::cupti {
namespace {

CUpti_ActivityKernel10 kernel(uint32_t stream, uint32_t corr, uint64_t start, uint64_t end, const char* name,
                              uint32_t graph = 0, uint32_t device = 0) {
  return test_records::kernel_record(device, stream, corr, start, end, name, graph);
}

using test_records::external_record;

template <typename R>
void feed(ActivityCollector& c, const R& record) {
  auto a = decode_activity(&record);
  ASSERT_TRUE(a.has_value());
  c.on_activity(*a);
}

int64_t counter(const trace::Trace& t, const std::string& name) {
  for (const auto& k : t.counters) {
    if (k.name == name) return k.value;
  }
  return -1;
}

// (instruction, iteration, correlation) of every event, in time order.
using Seen = std::vector<std::tuple<std::string, int, int64_t>>;
Seen seen(const trace::Trace& t) {
  Seen out;
  for (const trace::Event& e : t.events) out.emplace_back(std::string(t.instruction_of(e)), e.iteration, e.correlation);
  return out;
}

// A three-node graph of device 0 whose node "c" launches the same kernel as
// node "a", and node "b" two kernels. Iteration -1 launches every node on
// the stream, tagged and dropped; iterations 0 and 1 launch the graph
// (CUPTI graph id `graph`), its nodes registered untagged.
struct GraphRun {
  ActivityCollector c;
  explicit GraphRun(uint32_t graph) {
    c.map_stream(0, 7, 0);
    const char* names[] = {"a", "b", "c"};
    uint64_t id = 1;
    for (int it = -1; it < 2; ++it) {
      for (int64_t node = 0; node < 3; ++node) {
        c.register_launch(id++, {.device = 0, .stream = 0, .instruction = names[node], .iteration = it,
                                 .keep = it >= 0, .correlation = node + 1, .tagged = it < 0,
                                 .graph = it < 0 ? 0u : graph});
      }
    }
    // The tagged iteration: external ids 1, 2, 3.
    feed(c, kernel(7, 10, 100, 110, "k_add"));
    feed(c, kernel(7, 11, 120, 130, "k_gemm"));
    feed(c, kernel(7, 11, 130, 140, "k_epilogue"));
    feed(c, kernel(7, 12, 150, 160, "k_add"));
    for (auto [corr, ext] : {std::pair{10u, 1ull}, {11u, 2ull}, {12u, 3ull}}) feed(c, external_record(corr, ext));
  }
  // One graph launch's records (one correlation), starting at `t0`; "c" runs
  // beside "a" and starts first.
  void launch(uint32_t corr, uint64_t t0, uint32_t record_graph) {
    feed(c, kernel(7, corr, t0 + 0, t0 + 10, "k_add", record_graph));
    feed(c, kernel(7, corr, t0 + 1, t0 + 11, "k_add", record_graph));
    feed(c, kernel(7, corr, t0 + 20, t0 + 30, "k_gemm", record_graph));
    feed(c, kernel(7, corr, t0 + 30, t0 + 40, "k_epilogue", record_graph));
  }
};

const Seen kTwoLaunches = {{"a", 0, 1}, {"c", 0, 3}, {"b", 0, 2}, {"b", 0, 2},
                           {"a", 1, 1}, {"c", 1, 3}, {"b", 1, 2}, {"b", 1, 2}};

TEST(CollectorGraphs, GivesEachNodeItsRecordsByName) {
  GraphRun run(55);
  run.launch(20, 1000, 55);
  run.launch(30, 2000, 55);
  run.c.add_wait_edges({{4, 5}});  // iteration 0's DAG edge a -> b
  trace::Trace t = run.c.build_trace();
  EXPECT_EQ(seen(t), kTwoLaunches);
  ASSERT_EQ(t.dependencies.size(), 1u);
  EXPECT_EQ(t.instruction_of(t.events[t.dependencies[0].from]), "a");
  EXPECT_EQ(t.instruction_of(t.events[t.dependencies[0].to]), "b");
  EXPECT_EQ(counter(t, "records_in_graphs"), 8);
  EXPECT_EQ(counter(t, "graph_records_unattributed"), -1);
  EXPECT_EQ(counter(t, "warmup_records"), 4);
}

TEST(CollectorGraphs, RecordsNamingTheGraphItWasInstantiatedFrom) {
  GraphRun run(55);
  run.c.alias_graph(9, 55);
  run.launch(20, 1000, 9);
  run.launch(30, 2000, 9);
  EXPECT_EQ(seen(run.c.build_trace()), kTwoLaunches);
}

TEST(CollectorGraphs, UnknownGraphIdsMatchRegisteredGraphsInOrder) {
  GraphRun run(55);
  run.c.map_device(0, 0);
  run.launch(20, 1000, 4242);
  run.launch(30, 2000, 4242);
  trace::Trace t = run.c.build_trace();
  EXPECT_EQ(seen(t), kTwoLaunches);
  EXPECT_EQ(counter(t, "records_in_graphs"), 8);
}

TEST(CollectorGraphs, UnknownGraphOnAnotherDeviceIsNotTaken) {
  GraphRun run(55);
  run.c.map_device(0, 0);
  run.c.map_device(1, 1);
  feed(run.c, kernel(7, 20, 1000, 1010, "k_add", 4242, /*device=*/1));
  trace::Trace t = run.c.build_trace();
  EXPECT_TRUE(t.events.empty());
  EXPECT_EQ(counter(t, "graph_records_unattributed"), 1);
  EXPECT_EQ(counter(t, "graph_records_missing"), 0);
  EXPECT_EQ(counter(t, "records_order_mismatch"), 8);  // looked for by stream order, not there
}

// Records of a graph's launches that carry no graph id are found as stream
// launches' are, in their order on the stream (nodes that ran one after
// another, here).
TEST(CollectorGraphs, RecordsWithoutAGraphIdGoByStreamOrder) {
  GraphRun run(55);
  for (auto [corr, t0] : {std::pair{20u, 1000ull}, {30u, 2000ull}}) {
    feed(run.c, kernel(7, corr, t0 + 0, t0 + 10, "k_add"));
    feed(run.c, kernel(7, corr, t0 + 20, t0 + 30, "k_gemm"));
    feed(run.c, kernel(7, corr, t0 + 30, t0 + 40, "k_epilogue"));
    feed(run.c, kernel(7, corr, t0 + 50, t0 + 60, "k_add"));
  }
  trace::Trace t = run.c.build_trace();
  ASSERT_EQ(t.events.size(), 8u);
  for (const trace::Event& e : t.events) EXPECT_FALSE(t.instruction_of(e).empty());
  EXPECT_EQ(counter(t, "records_by_stream_order"), 8);
  EXPECT_EQ(counter(t, "records_in_graphs"), -1);
}

TEST(CollectorGraphs, CountsStrayAndMissingRecords) {
  GraphRun run(55);
  run.launch(20, 1000, 55);
  // The second launch lacks "b"'s epilogue and has a kernel no node left.
  feed(run.c, kernel(7, 30, 2000, 2010, "k_add", 55));
  feed(run.c, kernel(7, 30, 2001, 2011, "k_add", 55));
  feed(run.c, kernel(7, 30, 2020, 2030, "k_gemm", 55));
  feed(run.c, kernel(7, 30, 2040, 2050, "k_stray", 55));
  trace::Trace t = run.c.build_trace();
  EXPECT_EQ(t.events.size(), 7u);
  EXPECT_EQ(counter(t, "records_in_graphs"), 7);
  EXPECT_EQ(counter(t, "graph_records_unattributed"), 1);
  EXPECT_EQ(counter(t, "graph_records_missing"), 1);
}

TEST(CollectorGraphs, DecodesTheGraphIdOfKernelRecords) {
  const CUpti_ActivityKernel10 record = kernel(7, 1, 10, 20, "k", 31);
  auto a = decode_activity(&record);
  ASSERT_TRUE(a.has_value());
  const auto* k = std::get_if<KernelActivity>(&*a);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->graph_id, 31u);
}

}  // namespace
}  // namespace sl::cupti
