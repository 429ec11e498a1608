#pragma once
// Helpers for the GUI tests: scratch directories, hand-made traces and
// databases holding them.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/sched/lowering.h"
#include "core/trace/store/trace_store.h"
#include "core/trace/trace.h"
#include "tests/common/test_support.h"
#include "tests/gui/compact_shims.h"

namespace sl::gui::testing {

using test_support::add_event;
using test_support::ScratchDir;

// Device 0: a GEMM on stream 0 (0..1 ms), an elementwise op on stream 1
// (200..400 µs) that waits for nothing, an all-gather on the communication
// stream (100..900 µs); the GEMM's successor on stream 0 waits for the
// all-gather.
inline trace::Trace known_trace() {
  trace::Trace t;
  add_event(t, 0, 0, trace::EventKind::kGemm, "gemm_bf16_tile", "g0", 0, 1000000, 1 << 20, int64_t{1} << 40);
  add_event(t, 0, 0, trace::EventKind::kElementwise, "add_kernel", "add1", 1000000, 1100000, 1 << 22);
  add_event(t, 0, 1, trace::EventKind::kElementwise, "neg_kernel", "n0", 200000, 400000, 1 << 20);
  add_event(t, 0, 100, trace::EventKind::kCollective, "ncclAllGather", "ag0", 100000, 900000, int64_t{1} << 29);
  t.dependencies.push_back({3, 1});
  return t;
}

inline std::vector<sched::StreamAssignmentEntry> known_streams() {
  return {{"g0", 0, false, true}, {"add1", 0, false, true}, {"n0", 1, false, true}, {"ag0", 100, false, true},
          {"p0", 0, false, false}};
}

// Creates `path` holding one run of `trace`; returns its id.
inline int64_t save_trace(const std::string& path, const trace::Trace& trace, const std::string& program = "",
                          const std::vector<sched::StreamAssignmentEntry>& streams = {},
                          const std::string& name = "known", const std::string& config = "{}") {
  auto store = trace::TraceStore::open(path, trace::TraceStore::Mode::kCreateIfMissing);
  EXPECT_TRUE(store) << store.status().message();
  if (!store) return 0;
  trace::RunInfo info;
  info.name = name;
  info.program_name = "known";
  info.backend = "sim";
  info.device_model = "h200";
  info.config_json = config;
  auto id = (*store)->save_run(info, program, streams, trace);
  EXPECT_TRUE(id) << id.status().message();
  return id ? *id : 0;
}

// A program with two independent matmuls: `b` can be moved to stream 1.
constexpr const char* kTwoDotsProgram = R"(HloModule two_dots
ENTRY e {
  x = f32[256,256] parameter(0)
  y = f32[256,256] parameter(1)
  a = f32[256,256] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[256,256] dot(y, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT c = f32[256,256] add(a, b)
}
)";

}  // namespace sl::gui::testing
