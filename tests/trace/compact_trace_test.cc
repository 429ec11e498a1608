// CompactTrace (core/trace/compact_trace.h): the columns hold every field
// but bytes, flops and correlation of any trace, in its order, whatever
// order its tracks come in; permute and truncate move all columns together.

#include <gtest/gtest.h>

#include <vector>

#include "core/trace/compact_trace.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::add_event;

Trace interleaved() {
  Trace t;
  add_event(t, 1, 0, EventKind::kGemm, "g", "dot.1", 50, 60, 10, 20);
  add_event(t, 0, 100, EventKind::kCollective, "ag", "ag.0", 0, 100, 30);
  add_event(t, 1, 0, EventKind::kElementwise, "add", "", 60, 70);
  add_event(t, -3, 7, EventKind::kWait, "wait", "w", 5, 5);
  add_event(t, 0, 100, EventKind::kOther, "x", "x.2", 120, 90);  // ends before it starts: kept as is
  t.events[1].stream_kind = StreamKind::kCommunication;
  t.events[2].iteration = 4;
  t.events[3].iteration = -1;
  t.dependencies.push_back({1, 2});
  t.add_counter("odd", 2, "odd records");
  return t;
}

void expect_same(const Trace& full, const Event& a, const CompactTrace& c, const EventRef& b) {
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.stream_kind, b.stream_kind);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(full.name_of(a), c.name_of(b));
  EXPECT_EQ(full.instruction_of(a), c.instruction_of(b));
  EXPECT_EQ(a.iteration, b.iteration);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.duration_ns(), b.duration_ns());
}

TEST(CompactTrace, HoldsEveryViewedFieldInTheTracesOrder) {
  const Trace t = interleaved();
  const CompactTrace c = compact_trace(t);
  ASSERT_EQ(c.events.size(), t.events.size());
  for (size_t i = 0; i < t.events.size(); ++i) {
    SCOPED_TRACE(i);
    expect_same(t, t.events[i], c, c.events[i]);
    EXPECT_EQ(c.events.seq(i), i);
    EXPECT_EQ(c.events.start_ns(i), t.events[i].start_ns);
    EXPECT_EQ(c.events.end_ns(i), t.events[i].end_ns);
    EXPECT_EQ(c.events.kind(i), t.events[i].kind);
    EXPECT_EQ(c.events.name(i), c.events[i].name);
  }
  size_t visited = 0;
  for (const EventRef& e : c.events) visited += e.start_ns >= 0;
  EXPECT_EQ(visited, t.events.size());
  EXPECT_EQ(c.makespan_ns(), t.makespan_ns());
  ASSERT_EQ(c.dependencies.size(), 1u);
  EXPECT_EQ(c.dependencies[0].to, 2u);
  ASSERT_EQ(c.counters.size(), 1u);
  EXPECT_EQ(c.counters[0].value, 2);
}

TEST(CompactTrace, PermuteAndTruncateMoveEveryColumn) {
  const Trace t = interleaved();
  CompactTrace c = compact_trace(t);
  const std::vector<uint32_t> order = {3, 1, 4, 0, 2};
  c.events.permute(order);
  for (size_t i = 0; i < order.size(); ++i) {
    SCOPED_TRACE(i);
    expect_same(t, t.events[order[i]], c, c.events[i]);
    EXPECT_EQ(c.events.seq(i), order[i]);
  }
  c.events.truncate(2);
  ASSERT_EQ(c.events.size(), 2u);
  expect_same(t, t.events[1], c, c.events[1]);
  c.events.truncate(5);  // never grows
  EXPECT_EQ(c.events.size(), 2u);
}

TEST(CompactTrace, SeqsBeyond32BitsAreMarkedAbsentAndCountersAdd) {
  Trace t = interleaved();
  CompactTrace c;
  c.strings = t.strings;
  c.events.push_back(t.events[0], -1);
  c.events.push_back(t.events[1], int64_t{1} << 33);
  c.events.push_back(t.events[2], 12);
  EXPECT_EQ(c.events.seq(0), EventColumns::kNoSeq);
  EXPECT_EQ(c.events.seq(1), EventColumns::kNoSeq);
  EXPECT_EQ(c.events.seq(2), 12u);
  c.add_counter("lost", 1, "d");
  c.add_counter("lost", 2, "d");
  ASSERT_EQ(c.counters.size(), 1u);
  EXPECT_EQ(c.counters[0].value, 3);
  EXPECT_EQ(CompactTrace{}.makespan_ns(), 0);
}

}  // namespace
}  // namespace sl::trace
