// Emission order (emitter_order.cc): text order is the issue order of a
// scheduled module; implicit async pairs start right after their operands
// otherwise; control predecessors are always issued first and, for work on
// another stream, waited for; wait_on_operation_queues waits for those streams.

#include <gtest/gtest.h>

#include "tests/sched/sched_test_util.h"

namespace sl::sched {
namespace {

using testing::lower_text;
using testing::signature;
using Sig = std::vector<std::string>;

constexpr std::string_view kMoved = R"(
HloModule moved{SCHEDULED}
ENTRY e {
  x = f32[8] parameter(0)
  a = f32[8] exponential(x)
  b = f32[8] negate(x), backend_config={"operation_queue_id":"1"}
  ROOT c = f32[8] add(a, b)
}
)";

std::string with(std::string_view text, std::string_view key, std::string_view value) {
  std::string out(text);
  out.replace(out.find(key), key.size(), value);
  return out;
}

TEST(EmissionOrder, ScheduledModulesIssueInTextOrder) {
  auto hoisted = lower_text(with(kMoved, "{SCHEDULED}", ""));
  ASSERT_TRUE(hoisted);
  // Unscheduled: %b starts before %a, right after its operand.
  EXPECT_EQ(signature(hoisted->thunks()), (Sig{"rec s0 e0", "wait s1 e0", "s1 b", "rec s1 e1", "s0 a", "wait s0 e1",
                                               "s0 c"}));
  auto scheduled = lower_text(with(kMoved, "{SCHEDULED}", ", is_scheduled=true"));
  ASSERT_TRUE(scheduled);
  EXPECT_TRUE(scheduled->module.is_scheduled);
  EXPECT_EQ(signature(scheduled->thunks()), (Sig{"s0 a", "rec s0 e0", "wait s1 e0", "s1 b", "rec s1 e1",
                                                 "wait s0 e1", "s0 c"}));
}

TEST(EmissionOrder, ControlPredecessorsAreIssuedFirstAndWaitedFor) {
  auto l = lower_text(R"(
HloModule control
ENTRY e {
  x = f32[8] parameter(0)
  a = f32[8] exponential(x), control-predecessors={b}
  b = f32[8] negate(x), backend_config={"operation_queue_id":"1"}
  c = f32[8] abs(x), control-predecessors={b}
  ROOT t = (f32[8], f32[8]) tuple(a, c)
}
)");
  ASSERT_TRUE(l);
  ASSERT_EQ(l->module.entry_computation().instructions[1].control_predecessors.size(), 1u)
      << "the parser keeps control-predecessors";
  // %a is written before its predecessor %b but issued after it, and only
  // once %b's work on stream 1 is done.
  EXPECT_EQ(signature(l->thunks()), (Sig{"rec s0 e0", "wait s1 e0", "s1 b", "rec s1 e1", "wait s0 e1", "s0 a",
                                         "s0 c"}));
}

TEST(EmissionOrder, WaitOnOperationQueuesWaitsForThoseStreams) {
  auto l = lower_text(R"(
HloModule queues, is_scheduled=true
ENTRY e {
  x = f32[8] parameter(0)
  b = f32[8] negate(x), backend_config={"operation_queue_id":"1"}
  a = f32[8] exponential(x), backend_config={"wait_on_operation_queues":[1]}
  ROOT c = f32[8] add(a, b)
}
)");
  ASSERT_TRUE(l);
  ASSERT_EQ(l->module.entry_computation().instructions[2].wait_on_operation_queues, (std::vector<int64_t>{1}))
      << "the parser reads wait_on_operation_queues";
  EXPECT_EQ(signature(l->thunks()), (Sig{"rec s0 e0", "wait s1 e0", "s1 b", "rec s1 e1", "wait s0 e1", "s0 a",
                                         "s0 c"}));
}

}  // namespace
}  // namespace sl::sched
