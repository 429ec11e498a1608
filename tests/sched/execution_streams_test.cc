// XLA's stream assignment for async scopes (execution_streams.h): round robin
// over four compute streams and one communication stream, annotations, the
// walk through control flow, and the streams XLA chose for the real JAX
// dumps, as their thunk_sequence.txt names them.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"
#include "core/sched/execution_streams.h"
#include "core/sched/stream_assignment.h"
#include "tests/sched/sched_test_util.h"

namespace sl::sched {
namespace {

namespace fs = std::filesystem;

hlo::Module parse(std::string_view text) {
  auto parsed = hlo::parse_program(text, "test.hlo");
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message();
  return parsed.is_ok() ? std::move(parsed).value() : hlo::Module{};
}

const hlo::Instruction& named(const hlo::Module& module, std::string_view name) {
  for (const hlo::Computation& c : module.computations) {
    if (int i = c.find(name); i >= 0) return c.instructions[static_cast<size_t>(i)];
  }
  ADD_FAILURE() << "no instruction " << name;
  return module.computations.front().instructions.front();
}

// Six async computes and two async collectives, unannotated but for `a5`.
constexpr std::string_view kStarts = R"(
HloModule starts, num_partitions=2

%work (p: f32[8]) -> f32[8] {
  %p = f32[8] parameter(0)
  ROOT %n = f32[8] negate(%p)
}

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %e (x: f32[8]) -> f32[8] {
  %x = f32[8] parameter(0)
  %a0 = ((f32[8]), f32[8]) async-start(%x), calls=%work
  %a1 = ((f32[8]), f32[8]) async-start(%x), calls=%work
  %a2 = ((f32[8]), f32[8]) async-start(%x), calls=%work
  %a3 = ((f32[8]), f32[8]) async-start(%x), calls=%work
  %a4 = ((f32[8]), f32[8]) async-start(%x), calls=%work
  %a5 = ((f32[8]), f32[8]) async-start(%x), calls=%work, frontend_attributes={_xla_stream_annotation="3"}
  %r0 = f32[8] all-reduce-start(%x), channel_id=1, replica_groups={{0,1}}, to_apply=%sum
  %r1 = f32[8] all-reduce-start(%x), channel_id=2, replica_groups={{0,1}}, to_apply=%sum
  %d0 = f32[8] async-done(%a0)
  %d1 = f32[8] async-done(%a1)
  %d2 = f32[8] async-done(%a2)
  %d3 = f32[8] async-done(%a3)
  %d4 = f32[8] async-done(%a4)
  %d5 = f32[8] async-done(%a5)
  %q0 = f32[8] all-reduce-done(%r0)
  %q1 = f32[8] all-reduce-done(%r1)
  %s0 = f32[8] add(%d0, %d1)
  %s1 = f32[8] add(%s0, %d2)
  %s2 = f32[8] add(%s1, %d3)
  %s3 = f32[8] add(%s2, %d4)
  %s4 = f32[8] add(%s3, %d5)
  %s5 = f32[8] add(%s4, %q0)
  ROOT %s6 = f32[8] add(%s5, %q1)
}
)";

TEST(ExecutionStreams, RoundRobinOverFourComputeStreamsAndOneCommunicationStream) {
  hlo::Module module = parse(kStarts);
  ASSERT_FALSE(module.computations.empty());
  auto streams = assign_execution_streams(module);
  auto stream = [&](std::string_view name) { return streams.at(&named(module, name)); };
  EXPECT_EQ(stream("a0"), 1);
  EXPECT_EQ(stream("a1"), 2);
  EXPECT_EQ(stream("a2"), 3);
  EXPECT_EQ(stream("a3"), 4);
  EXPECT_EQ(stream("a4"), 1);  // wraps around after kXlaComputeStreams
  EXPECT_EQ(stream("a5"), 3);  // annotated; takes no turn from the round robin
  EXPECT_EQ(stream("r0"), kCommStreamBase);
  EXPECT_EQ(stream("r1"), kCommStreamBase);
  EXPECT_EQ(xla_stream_name(stream("a0")), "computation_stream[0]");
  EXPECT_EQ(xla_stream_name(stream("r1")), "communication_stream[0]");
}

TEST(ExecutionStreams, LoweringUsesThemAndAStartInALoopGetsOneStream) {
  constexpr std::string_view kLoop = R"(
HloModule loop

%work (p: f32[8]) -> f32[8] {
  %p = f32[8] parameter(0)
  ROOT %n = f32[8] negate(%p)
}

%body (s: (s32[], f32[8])) -> (s32[], f32[8]) {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = f32[8] get-tuple-element(%s), index=1
  %st = ((f32[8]), f32[8]) async-start(%v), calls=%work
  %dn = f32[8] async-done(%st)
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  ROOT %t = (s32[], f32[8]) tuple(%i1, %dn)
}

%cond (s: (s32[], f32[8])) -> pred[] {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

ENTRY %e (x: f32[8]) -> f32[8] {
  %x = f32[8] parameter(0)
  %pre = ((f32[8]), f32[8]) async-start(%x), calls=%work
  %pd = f32[8] async-done(%pre)
  %z = s32[] constant(0)
  %init = (s32[], f32[8]) tuple(%z, %pd)
  %w = (s32[], f32[8]) while(%init), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"3"}}
  ROOT %out = f32[8] get-tuple-element(%w), index=1
}
)";
  auto l = testing::lower_text(kLoop);
  ASSERT_NE(l, nullptr);
  std::vector<int> body_streams;
  for (const Thunk& t : l->thunks()) {
    if (t.kind == ThunkKind::kKernel && t.instruction && t.instruction->name == "n") body_streams.push_back(t.stream);
  }
  // %pre takes computation_stream[0]; the loop's start takes [1] on each of its 3 trips.
  EXPECT_EQ(body_streams, (std::vector<int>{1, 2, 2, 2}));
}

// The stream names of the kAsyncStart thunks in a thunk_sequence.txt, in order.
std::vector<std::string> xla_async_streams(const fs::path& thunk_sequence) {
  std::ifstream in(thunk_sequence);
  std::vector<std::string> names;
  std::string line;
  const std::regex start(R"(kAsyncStart .*stream=([a-z_]+\[[0-9]+\]))");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, start)) names.push_back(m[1]);
  }
  return names;
}

// Ours for the same module: every async-start in execution order (while
// condition, then body, once), as XLA's thunk sequence lists them.
void collect_starts(const hlo::Module& module, const hlo::Computation& computation, const StreamPolicy& policy,
                    std::vector<std::string>& out, int depth) {
  if (depth > 16) return;
  for (const hlo::Instruction& inst : computation.instructions) {
    if (inst.opcode == hlo::Opcode::kAsyncStart) {
      out.push_back(xla_stream_name(policy.stream_of(inst).value_or(kMainStream)));
    } else if (inst.opcode == hlo::Opcode::kWhile || inst.opcode == hlo::Opcode::kCall ||
               inst.opcode == hlo::Opcode::kConditional) {
      for (int callee : inst.called) {
        collect_starts(module, module.computations.at(static_cast<size_t>(callee)), policy, out, depth + 1);
      }
    }
  }
}

TEST(ExecutionStreams, MatchTheThunkSequencesOfRealDumps) {
  int compared = 0;
  for (const char* size : {"small", "large"}) {
    const fs::path root = fs::path(SL_SOURCE_DIR) / "tests/corpus/jax" / size;
    if (!fs::exists(root)) continue;
    for (const auto& dir : fs::directory_iterator(root)) {
      fs::path optimized, sequence;
      for (const auto& file : fs::directory_iterator(dir.path())) {
        const std::string name = file.path().filename().string();
        if (name.ends_with(".sm_9.0a_gpu_after_optimizations.txt")) optimized = file.path();
        if (name.ends_with(".thunk_sequence.txt")) sequence = file.path();
      }
      if (optimized.empty() || sequence.empty()) continue;
      std::vector<std::string> expected = xla_async_streams(sequence);
      if (expected.empty()) continue;
      auto parsed = hlo::parse_program_file(optimized.string());
      ASSERT_TRUE(parsed.is_ok()) << optimized << ": " << parsed.status().message();
      auto policy = StreamPolicy::create(*parsed, {}, nullptr);
      ASSERT_TRUE(policy.is_ok());
      std::vector<std::string> ours;
      collect_starts(*parsed, parsed->entry_computation(), *policy, ours, 0);
      EXPECT_EQ(ours, expected) << optimized;
      ++compared;
    }
  }
  EXPECT_GE(compared, 4) << "the corpus has dumps with async starts in small/ and large/";
}

}  // namespace
}  // namespace sl::sched
