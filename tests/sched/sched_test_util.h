#pragma once
// Helpers for the sched tests: parse HLO text and lower it, and find thunks.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/hlo/parser.h"
#include "core/sched/lowering.h"

namespace sl::sched::testing {

// Parses and lowers; the module is kept alive beside the lowered program.
struct Lowered {
  hlo::Module module;
  LoweredProgram program;
  const DeviceProgram& device(size_t d = 0) const { return program.devices.at(d); }
  const std::vector<Thunk>& thunks(size_t d = 0) const { return device(d).thunks; }
};

inline std::unique_ptr<Lowered> lower_text(std::string_view text, LowerOptions options = {}) {
  auto parsed = hlo::parse_program(text, "test.hlo");
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message();
  if (!parsed.is_ok()) return nullptr;
  auto out = std::make_unique<Lowered>();
  out->module = std::move(parsed).value();
  auto lowered = lower(out->module, options);
  EXPECT_TRUE(lowered.is_ok()) << lowered.status().message();
  if (!lowered.is_ok()) return nullptr;
  out->program = std::move(lowered).value();
  return out;
}

// Index of the (occurrence-th) work thunk of an instruction, or -1.
inline int find_thunk(const std::vector<Thunk>& thunks, std::string_view instruction, int occurrence = 0) {
  for (size_t i = 0; i < thunks.size(); ++i) {
    const Thunk& t = thunks[i];
    if (t.instruction && t.instruction->name == instruction && t.occurrence == occurrence) return static_cast<int>(i);
  }
  return -1;
}

inline const StreamAssignmentEntry* stream_entry(const LoweredProgram& program, std::string_view instruction) {
  for (const auto& entry : program.streams) {
    if (entry.instruction == instruction) return &entry;
  }
  return nullptr;
}

// A compact signature of the thunk sequence: "rec s0 e0", "wait s1 e0", "s1 name", ...
inline std::vector<std::string> signature(const std::vector<Thunk>& thunks) {
  std::vector<std::string> out;
  for (const Thunk& t : thunks) {
    switch (t.kind) {
      case ThunkKind::kRecordEvent:
        out.push_back("rec s" + std::to_string(t.stream) + " e" + std::to_string(t.event));
        break;
      case ThunkKind::kWaitEvent:
        out.push_back("wait s" + std::to_string(t.stream) + " e" + std::to_string(t.event));
        break;
      default:
        out.push_back("s" + std::to_string(t.stream) + " " + (t.instruction ? t.instruction->name : "?"));
    }
  }
  return out;
}

inline bool overlaps(const BufferSlice& a, const BufferSlice& b) {
  if (a.offset < 0 || b.offset < 0) return false;
  return a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

}  // namespace sl::sched::testing
