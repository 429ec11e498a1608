#pragma once
// A store's two read paths agree: load_compact holds exactly load_trace's
// events (order, every field it keeps), edges and counters, and
// load_event_extras gives each event's bytes, flops and correlation.

#include <gtest/gtest.h>

#include <tuple>

#include "core/trace/compact_trace.h"
#include "core/trace/store/trace_store.h"

namespace sl::trace::testing {

inline void expect_compact_matches(TraceStore& store, int64_t run) {
  auto full = store.load_trace(run);
  ASSERT_TRUE(full.is_ok()) << full.status().message();
  auto compact = store.load_compact(run);
  ASSERT_TRUE(compact.is_ok()) << compact.status().message();
  ASSERT_EQ(compact->events.size(), full->events.size());
  for (size_t i = 0; i < full->events.size(); ++i) {
    const Event& a = full->events[i];
    const EventRef b = compact->events[i];
    ASSERT_EQ(std::make_tuple(a.device, a.stream, a.stream_kind, a.kind, full->name_of(a), full->instruction_of(a),
                              a.iteration, a.start_ns, a.end_ns),
              std::make_tuple(b.device, b.stream, b.stream_kind, b.kind, compact->name_of(b),
                              compact->instruction_of(b), b.iteration, b.start_ns, b.end_ns))
        << "event " << i;
    const uint32_t seq = compact->events.seq(i);
    ASSERT_NE(seq, EventColumns::kNoSeq) << i;
    auto extras = store.load_event_extras(run, b.device, b.stream, seq);
    ASSERT_TRUE(extras.is_ok()) << i << ": " << extras.status().message();
    EXPECT_EQ(std::make_tuple(extras->bytes, extras->flops, extras->correlation),
              std::make_tuple(a.bytes, a.flops, a.correlation))
        << "event " << i;
  }
  ASSERT_EQ(compact->dependencies.size(), full->dependencies.size());
  for (size_t k = 0; k < full->dependencies.size(); ++k) {
    EXPECT_EQ(compact->dependencies[k].from, full->dependencies[k].from) << k;
    EXPECT_EQ(compact->dependencies[k].to, full->dependencies[k].to) << k;
  }
  ASSERT_EQ(compact->counters.size(), full->counters.size());
  for (size_t k = 0; k < full->counters.size(); ++k) {
    EXPECT_EQ(compact->counters[k].name, full->counters[k].name);
    EXPECT_EQ(compact->counters[k].value, full->counters[k].value);
  }
  EXPECT_EQ(compact->makespan_ns(), full->makespan_ns());
}

}  // namespace sl::trace::testing
