// While loops in lowering: the trip count from known_trip_count, else from the
// condition's constant bound (trip_count.h), else the default; and the
// unrolling cap, past which lowering fails at the while's location.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/hlo/parser.h"
#include "core/sched/trip_count.h"
#include "tests/sched/sched_test_util.h"

namespace sl::sched {
namespace {

// The scan_rnn dump's shape of loop: the counter starts from a copied
// constant, the body adds 1 in a fusion, the condition compares in a fusion.
std::string loop(std::string_view backend_config, int64_t init, int64_t bound, std::string_view direction,
                 int64_t step) {
  return fmt::format(R"(
HloModule loop

%fused_add (a: s32[]) -> s32[] {{
  %a = s32[] parameter(0)
  %c = s32[] constant({step})
  ROOT %s = s32[] add(%a, %c)
}}

%fused_compare (a: s32[]) -> pred[] {{
  %a = s32[] parameter(0)
  %c = s32[] constant({bound})
  ROOT %lt = pred[] compare(%a, %c), direction={direction}
}}

%body (s: (s32[], f32[8])) -> (s32[], f32[8]) {{
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = f32[8] get-tuple-element(%s), index=1
  %n = f32[8] negate(%v)
  %i1 = s32[] fusion(%i), kind=kLoop, calls=%fused_add
  ROOT %t = (s32[], f32[8]) tuple(%i1, %n)
}}

%cond (s: (s32[], f32[8])) -> pred[] {{
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  ROOT %go = pred[] fusion(%i), kind=kLoop, calls=%fused_compare
}}

ENTRY %e (x: f32[8]) -> f32[8] {{
  %x = f32[8] parameter(0)
  %z = s32[] constant({init})
  %zc = s32[] copy(%z)
  %init = (s32[], f32[8]) tuple(%zc, %x)
  %w = (s32[], f32[8]) while(%init), condition=%cond, body=%body{config}
  ROOT %out = f32[8] get-tuple-element(%w), index=1
}}
)",
                     fmt::arg("step", step), fmt::arg("bound", bound), fmt::arg("direction", direction),
                     fmt::arg("init", init), fmt::arg("config", backend_config));
}

// A loop whose condition is constant: no bound to read, only known_trip_count.
constexpr std::string_view kLoop = R"(
HloModule loop
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[8] get-tuple-element(p), index=1
  n = f32[8] negate(v)
  ROOT t = (s32[], f32[8]) tuple(i, n)
}
cond {
  p = (s32[], f32[8]) parameter(0)
  ROOT c = pred[] constant(true)
}
ENTRY e {
  x = f32[8] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[8]) tuple(z, x)
  w = (s32[], f32[8]) while(init), condition=cond, body=body TRIP
  ROOT r = f32[8] get-tuple-element(w), index=1
}
)";

std::string loop_text(std::string_view trip) {
  std::string text(kLoop);
  text.replace(text.find("TRIP"), 4, trip);
  return text;
}

TEST(WhileLoops, WhileUnrollsKnownTripCount) {
  auto l = testing::lower_text(loop_text(R"(, backend_config={"known_trip_count":{"n":"3"}})"));
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  ASSERT_EQ(thunks.size(), 3u);  // parameters, tuples, gte and constants make no thunk
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(thunks[k].instruction->name, "n");
    EXPECT_EQ(thunks[k].occurrence, k);
  }
  // Each iteration reads the previous one's result.
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(thunks[k].operands.size() == 1 && thunks[k].results.size() == 1);
  EXPECT_EQ(thunks[1].operands[0].offset, thunks[0].results[0].offset);
  EXPECT_EQ(thunks[2].operands[0].offset, thunks[1].results[0].offset);
  EXPECT_EQ(l->program.buffers.outputs.at(0).offset, thunks[2].results[0].offset);
  EXPECT_TRUE(l->program.warnings.empty());
}

TEST(WhileLoops, WhileWithoutTripCountUsesDefaultAndWarns) {
  LowerOptions options;
  options.default_trip_count = 2;
  auto l = testing::lower_text(loop_text(""), options);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->thunks().size(), 2u);
  ASSERT_EQ(l->program.warnings.size(), 1u);
  EXPECT_NE(l->program.warnings[0].find("known_trip_count"), std::string::npos);
}

int negates(const testing::Lowered& l) {
  int n = 0;
  for (const Thunk& t : l.thunks()) n += t.instruction && t.instruction->name == "n" ? 1 : 0;
  return n;
}

TEST(WhileLoops, TripCountFromTheConditionsConstantBound) {
  auto lt = testing::lower_text(loop("", 0, 6, "LT", 1));
  ASSERT_NE(lt, nullptr);
  EXPECT_EQ(negates(*lt), 6);
  ASSERT_FALSE(lt->program.warnings.empty());
  EXPECT_NE(lt->program.warnings[0].find("constant bound gives 6"), std::string::npos) << lt->program.warnings[0];

  auto le = testing::lower_text(loop("", 1, 10, "LE", 3));  // 1, 4, 7, 10
  ASSERT_NE(le, nullptr);
  EXPECT_EQ(negates(*le), 4);
  auto down = testing::lower_text(loop("", 5, 0, "GT", -1));
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(negates(*down), 5);
  auto never = testing::lower_text(loop("", 7, 6, "LT", 1));
  ASSERT_NE(never, nullptr);
  EXPECT_EQ(negates(*never), 0);
}

TEST(WhileLoops, KnownTripCountWins) {
  auto l = testing::lower_text(loop(R"(, backend_config={"known_trip_count":{"n":"2"}})", 0, 6, "LT", 1));
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(negates(*l), 2);
  EXPECT_TRUE(l->program.warnings.empty());
}

TEST(WhileLoops, NoBoundFallsBackToTheDefaultWithAWarning) {
  // A bound the loop cannot know before it runs (the partition id).
  std::string text = loop("", 0, 6, "LT", 1);
  const std::string cond = "  ROOT %go = pred[] fusion(%i), kind=kLoop, calls=%fused_compare";
  text.replace(text.find(cond), cond.size(),
               "  %p = u32[] partition-id()\n  %ps = s32[] convert(%p)\n"
               "  ROOT %go = pred[] compare(%i, %ps), direction=LT");
  auto l = testing::lower_text(text);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(negates(*l), 1);
  ASSERT_EQ(l->program.warnings.size(), 1u);
  EXPECT_NE(l->program.warnings[0].find("no constant bound: unrolled 1 time(s)"), std::string::npos)
      << l->program.warnings[0];
  const hlo::Computation& entry = l->module.entry_computation();
  EXPECT_EQ(infer_trip_count(l->module, entry, entry.instructions[static_cast<size_t>(entry.find("w"))], 100),
            std::nullopt);
}

// "loop.hlo:LINE:3" of the while in `text`.
std::string while_location(const std::string& text) {
  const size_t at = text.find("  %w = ");
  return fmt::format("loop.hlo:{}:3", std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1);
}

TEST(WhileLoops, HugeTripCountIsRefusedAtTheWhilesLocation) {
  const std::string text = loop(R"(, backend_config={"known_trip_count":{"n":"1000000000000"}})", 0, 6, "LT", 1);
  auto parsed = hlo::parse_program(text, "loop.hlo");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  Result<LoweredProgram> lowered = lower(*parsed, {});
  ASSERT_FALSE(lowered.is_ok());
  EXPECT_EQ(lowered.status().code(), ErrorCode::kInvalidInput);
  EXPECT_NE(lowered.status().message().find(while_location(text) + ": error: while %w runs 1000000000000 trips"),
            std::string::npos)
      << lowered.status().message();
  EXPECT_NE(lowered.status().message().find("--max-unroll"), std::string::npos);

  // An inferred bound is stepped only up to the cap, then refused the same way.
  auto big = hlo::parse_program(loop("", 0, 2000000000, "LT", 1), "loop.hlo");
  ASSERT_TRUE(big.is_ok());
  Result<LoweredProgram> refused = lower(*big, {});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("more than the unrolling cap"), std::string::npos);
}

TEST(WhileLoops, TheCapCountsThunksAndCanBeRaised) {
  // 50 trips of two kernels (negate, the counter's fusion): 100 thunks.
  const std::string text = loop(R"(, backend_config={"known_trip_count":{"n":"50"}})", 0, 6, "LT", 1);
  auto parsed = hlo::parse_program(text, "loop.hlo");
  ASSERT_TRUE(parsed.is_ok());
  LowerOptions options;
  options.max_thunks = 200;
  EXPECT_TRUE(lower(*parsed, options).is_ok());
  options.max_thunks = 60;  // the trips fit, the thunks do not
  Result<LoweredProgram> thunks = lower(*parsed, options);
  ASSERT_FALSE(thunks.is_ok());
  EXPECT_NE(thunks.status().message().find(while_location(text) + ": error: while %w unrolls past 60 thunks"),
            std::string::npos)
      << thunks.status().message();
  options.max_thunks = 30;
  Result<LoweredProgram> trips = lower(*parsed, options);
  ASSERT_FALSE(trips.is_ok());
  EXPECT_NE(trips.status().message().find("more than the unrolling cap of 30"), std::string::npos)
      << trips.status().message();
}

TEST(WhileLoops, TheRealScanLoopsBoundMatchesItsKnownTripCount) {
  // XLA wrote known_trip_count 6 on the scan_rnn dump's while; without it the
  // condition's constant bound must give the same.
  const std::filesystem::path path = std::filesystem::path(SL_SOURCE_DIR) /
                                     "tests/corpus/jax/small/scan_rnn/module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt";
  auto parsed = hlo::parse_program_file(path.string());
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  const hlo::Computation& entry = parsed->entry_computation();
  const int w = entry.find("while.6");
  ASSERT_GE(w, 0);
  const hlo::Instruction& loop = entry.instructions[static_cast<size_t>(w)];
  ASSERT_EQ(loop.known_trip_count, 6);
  EXPECT_EQ(infer_trip_count(*parsed, entry, loop, 1000), 6);
}

}  // namespace
}  // namespace sl::sched
