#pragma once
// Helpers shared by the trace tests: scratch files and hand-made traces.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/trace/trace.h"
#include "tests/common/test_support.h"

namespace sl::trace::testing {

inline constexpr int kComm = sched::kCommStreamBase;

using test_support::add_event;
using test_support::read_bytes;
using test_support::ScratchDir;
using test_support::write_bytes;

// A deterministic synthetic trace of n events over `devices` devices with
// three compute streams and one communication stream each.
inline Trace synthetic_trace(size_t n, int devices = 2) {
  Trace t;
  const char* names[] = {"gemm_bf16", "add_f32", "all_gather", "copy", "fusion.3"};
  EventKind kinds[] = {EventKind::kGemm, EventKind::kElementwise, EventKind::kCollective, EventKind::kCopy,
                       EventKind::kOther};
  t.events.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    int device = static_cast<int>(i % static_cast<size_t>(devices));
    size_t k = (i / static_cast<size_t>(devices)) % 5;
    int stream = k == 2 ? sched::kCommStreamBase : static_cast<int>(k % 3);
    int64_t start = static_cast<int64_t>(i) * 1000;
    add_event(t, device, stream, kinds[k], names[k], "instr." + std::to_string(i % 1000), start,
              start + 700 + static_cast<int64_t>(i % 17), static_cast<int64_t>(i) * 64, static_cast<int64_t>(i) * 3);
    t.events.back().iteration = static_cast<int32_t>(i / 100000);
  }
  return t;
}

}  // namespace sl::trace::testing
