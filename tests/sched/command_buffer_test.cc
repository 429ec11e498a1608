// Which command buffers the cuda backend can run as one CUDA graph
// (sched::command_buffer_refusal), on hand-built programs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/sched/command_buffer.h"

namespace sl::sched {
namespace {

Thunk work(int stream, ThunkKind kind = ThunkKind::kKernel) {
  Thunk t;
  t.kind = kind;
  t.stream = stream;
  t.attributed_name = "k";
  return t;
}

Thunk event(ThunkKind kind, int stream, int id) {
  Thunk t;
  t.kind = kind;
  t.stream = stream;
  t.event = id;
  return t;
}

DeviceProgram program(std::vector<Thunk> thunks) {
  DeviceProgram p;
  p.thunks = std::move(thunks);
  return p;
}

CommandBuffer chain(std::vector<uint32_t> thunks) {
  CommandBuffer g;
  g.thunks = std::move(thunks);
  for (size_t k = 0; k < g.thunks.size(); ++k) {
    g.deps.push_back(k == 0 ? std::vector<int>{} : std::vector<int>{static_cast<int>(k) - 1});
  }
  return g;
}

bool says(const std::string& why, const std::string& part) { return why.find(part) != std::string::npos; }

TEST(CommandBufferRefusal, KernelsAndGemmsOfOneStreamRunAsAGraph) {
  auto p = program({work(0), work(0, ThunkKind::kGemm), work(1), work(0)});
  EXPECT_EQ(command_buffer_refusal(p, chain({0, 1, 3}), nullptr), "");  // stream 1's work may run between
}

TEST(CommandBufferRefusal, ARecordBetweenNodesOnlyFiresLater) {
  auto p = program({work(0), event(ThunkKind::kRecordEvent, 0, 0), work(0)});
  EXPECT_EQ(command_buffer_refusal(p, chain({0, 2}), nullptr), "");
}

TEST(CommandBufferRefusal, ACollectiveNodeIsRefused) {
  auto p = program({work(0), work(0, ThunkKind::kCollective)});
  EXPECT_TRUE(says(command_buffer_refusal(p, chain({0, 1}), nullptr), "collective"));
}

TEST(CommandBufferRefusal, NodesOnTwoStreamsJoinedByTheirOwnEventsRunAsAGraph) {
  // 0 on s0, then s1 waits for it and runs 3, and s0 waits for 3 before 6.
  auto p = program({work(0), event(ThunkKind::kRecordEvent, 0, 0), event(ThunkKind::kWaitEvent, 1, 0), work(1),
                    event(ThunkKind::kRecordEvent, 1, 1), event(ThunkKind::kWaitEvent, 0, 1), work(0)});
  EXPECT_EQ(command_buffer_refusal(p, chain({0, 3, 6}), nullptr), "");
}

TEST(CommandBufferRefusal, AWaitForAnEventFromOutsideTheGraphIsRefused) {
  // s2's work 1 is no node; s0 waits for it between the nodes.
  auto p = program({work(0), work(2), event(ThunkKind::kRecordEvent, 2, 4), event(ThunkKind::kWaitEvent, 0, 4),
                    work(0)});
  EXPECT_TRUE(says(command_buffer_refusal(p, chain({0, 4}), nullptr), "waits for event 4, recorded outside"));
}

TEST(CommandBufferRefusal, AWaitOnItsStreamBetweenNodesIsRefused) {
  auto p = program({work(0), event(ThunkKind::kWaitEvent, 0, 3), work(0)});
  EXPECT_TRUE(says(command_buffer_refusal(p, chain({0, 2}), nullptr), "waits for event 3, recorded outside"));
}

TEST(CommandBufferRefusal, OtherWorkOnItsStreamBetweenNodesIsRefused) {
  auto p = program({work(0), work(0), work(0)});
  EXPECT_TRUE(says(command_buffer_refusal(p, chain({0, 2}), nullptr), "is no node"));
}

TEST(CommandBufferRefusal, BadNodesAreRefused) {
  auto p = program({work(0), work(0)});
  EXPECT_TRUE(says(command_buffer_refusal(p, chain({0, 7}), nullptr), "past the program"));
  EXPECT_TRUE(says(command_buffer_refusal(p, chain({1, 1}), nullptr), "a node twice"));
  EXPECT_TRUE(says(command_buffer_refusal(p, CommandBuffer{.thunks = {0, 1}, .deps = {{1}, {}}}, nullptr),
                   "not an earlier one"));
  const std::vector<int32_t> taken = {-1, 0};
  EXPECT_TRUE(says(command_buffer_refusal(p, chain({0, 1}), &taken), "another graph"));
  EXPECT_TRUE(says(command_buffer_refusal(p, CommandBuffer{}, nullptr), "no nodes"));
}

}  // namespace
}  // namespace sl::sched
