// Stream assignment from each source (docs/streams.md): operation_queue_id,
// _xla_stream_annotation, explicit async-start, async/sync collectives, and
// user overrides.

#include <gtest/gtest.h>

#include "tests/sched/sched_test_util.h"

namespace sl::sched {
namespace {

using testing::find_thunk;
using testing::lower_text;
using testing::signature;
using testing::stream_entry;
using Sig = std::vector<std::string>;

constexpr std::string_view kQueueId = R"(
HloModule queue
ENTRY e {
  x = f32[8] parameter(0)
  a = f32[8] negate(x), backend_config={"operation_queue_id":"2"}
  b = f32[8] exponential(x)
  c = f32[8] add(a, b)
  ROOT d = f32[8] add(c, x)
}
)";

TEST(StreamAssignment, OperationQueueIdWrapsInImplicitAsyncPair) {
  auto l = lower_text(kQueueId);
  ASSERT_TRUE(l);
  // a starts at its place; its done comes just before its first user c.
  EXPECT_EQ(signature(l->thunks()), (Sig{"rec s0 e0", "wait s2 e0", "s2 a", "rec s2 e1", "s0 b", "wait s0 e1",
                                         "s0 c", "s0 d"}));
  const auto* a = stream_entry(l->program, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->stream, 2);
  EXPECT_FALSE(a->overridden);
  EXPECT_TRUE(a->async_capable);
  EXPECT_EQ(stream_entry(l->program, "b")->stream, 0);
  EXPECT_FALSE(stream_entry(l->program, "x")->async_capable);
}

TEST(StreamAssignment, ImplicitDoneWithoutUserGoesToTheEnd) {
  auto l = lower_text(R"(
HloModule tail
ENTRY e {
  x = f32[8] parameter(0)
  side = f32[8] negate(x), backend_config={"operation_queue_id":"1"}
  ROOT y = f32[8] exponential(x)
}
)");
  ASSERT_TRUE(l);
  EXPECT_EQ(signature(l->thunks()), (Sig{"rec s0 e0", "wait s1 e0", "s1 side", "rec s1 e1", "s0 y", "wait s0 e1"}));
}

TEST(StreamAssignment, StreamAnnotationOnCallMovesTheWholeBody) {
  auto l = lower_text(R"(
HloModule annotated
body {
  p = f32[8] parameter(0)
  n = f32[8] negate(p)
  ROOT m = f32[8] multiply(n, n)
}
ENTRY e {
  x = f32[8] parameter(0)
  c = f32[8] call(x), to_apply=body, frontend_attributes={_xla_stream_annotation="3"}
  ROOT r = f32[8] add(c, x)
}
)");
  ASSERT_TRUE(l);
  EXPECT_EQ(signature(l->thunks()),
            (Sig{"rec s0 e0", "wait s3 e0", "s3 n", "s3 m", "rec s3 e1", "wait s0 e1", "s0 r"}));
  // Work of the moved call is reported under the call's name.
  EXPECT_EQ(l->thunks()[find_thunk(l->thunks(), "n")].attributed_name, "c");
  EXPECT_EQ(stream_entry(l->program, "c")->stream, 3);
  EXPECT_EQ(stream_entry(l->program, "n")->stream, 3);
}

constexpr std::string_view kExplicitAsync = R"(
HloModule explicit
neg {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
ENTRY e {
  x = f32[8] parameter(0)
  s = ((f32[8]), f32[8], s32[]) async-start(x), calls=neg
  y = f32[8] exponential(x)
  d = f32[8] async-done(s)
  ROOT r = f32[8] add(d, y)
}
)";

TEST(StreamAssignment, ExplicitAsyncStartDefaultsToStreamOne) {
  auto l = lower_text(kExplicitAsync);
  ASSERT_TRUE(l);
  EXPECT_EQ(signature(l->thunks()),
            (Sig{"rec s0 e0", "wait s1 e0", "s1 n", "rec s1 e1", "s0 y", "wait s0 e1", "s0 r"}));
  EXPECT_EQ(l->thunks()[2].attributed_name, "s");
  EXPECT_EQ(stream_entry(l->program, "s")->stream, 1);
  EXPECT_FALSE(stream_entry(l->program, "d")->async_capable);
}

TEST(StreamAssignment, ExplicitAsyncStartCarriesItsStream) {
  std::string text(kExplicitAsync);
  text.replace(text.find("calls=neg"), 9, R"(calls=neg, backend_config={"operation_queue_id":"4"})");
  auto l = lower_text(text);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->thunks()[find_thunk(l->thunks(), "n")].stream, 4);
}

constexpr std::string_view kCollectives = R"(
HloModule collectives, replica_count=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  ar = f32[8] all-reduce(x), replica_groups={{0,1}}, to_apply=sum
  ags = (f32[8], f32[16]) all-gather-start(ar), replica_groups={{0,1}}, dimensions={0}
  y = f32[8] negate(ar)
  agd = f32[16] all-gather-done(ags)
  ROOT t = (f32[16], f32[8]) tuple(agd, y)
}
)";

TEST(StreamAssignment, AsyncCollectivesUseCommStreamSyncOnesStreamZero) {
  auto l = lower_text(kCollectives);
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  int ar = find_thunk(thunks, "ar");
  int ag = find_thunk(thunks, "ags");
  ASSERT_GE(ar, 0);
  ASSERT_GE(ag, 0);
  EXPECT_EQ(thunks[ar].stream, kMainStream);
  EXPECT_EQ(thunks[ar].kind, ThunkKind::kCollective);
  EXPECT_EQ(thunks[ag].stream, kCommStreamBase);
  EXPECT_EQ(thunks[ag].collective.op, hlo::Opcode::kAllGather);
  EXPECT_EQ(thunks[ag].collective.bytes_out, 64);
  EXPECT_EQ(stream_entry(l->program, "ags")->stream, kCommStreamBase);
  EXPECT_EQ(signature(thunks), (Sig{"s0 ar", "rec s0 e0", "wait s100 e0", "s100 ags", "rec s100 e1", "s0 y",
                                    "wait s0 e1"}));
}

TEST(StreamAssignment, OverridesWinOverEverySource) {
  LowerOptions options;
  options.overrides = {{"ags", 1}, {"ar", kCommStreamBase}, {"y", 0}};
  auto l = lower_text(kCollectives, options);
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  // A sync collective moved to the comm stream gets an implicit async pair.
  EXPECT_EQ(thunks[find_thunk(thunks, "ar")].stream, kCommStreamBase);
  EXPECT_EQ(thunks[find_thunk(thunks, "ags")].stream, 1);
  EXPECT_EQ(signature(thunks), (Sig{"rec s0 e0", "wait s100 e0", "s100 ar", "rec s100 e1", "wait s0 e1",
                                    "rec s0 e2", "wait s1 e2", "s1 ags", "rec s1 e3", "s0 y", "wait s0 e3"}));
  EXPECT_TRUE(stream_entry(l->program, "ags")->overridden);
  EXPECT_TRUE(stream_entry(l->program, "ar")->overridden);
  EXPECT_FALSE(stream_entry(l->program, "agd")->overridden);

  // Moving a queued instruction back to the main stream makes it synchronous;
  // b, moved to stream 5, starts right after its operand x, so before a.
  LowerOptions back;
  back.overrides = {{"a", 0}, {"%b", 5}};
  auto q = lower_text(kQueueId, back);
  ASSERT_TRUE(q);
  EXPECT_EQ(signature(q->thunks()), (Sig{"rec s0 e0", "wait s5 e0", "s5 b", "rec s5 e1", "s0 a", "wait s0 e1",
                                         "s0 c", "s0 d"}));
}

TEST(StreamAssignment, MovedInstructionStartsRightAfterItsOperands) {
  // Without the hoist, g1's start would wait for g0 on stream 0 and moving it
  // to stream 1 could never overlap the two GEMMs.
  constexpr std::string_view kTwoGemms = R"(
HloModule two
ENTRY e {
  x = f32[4,4] parameter(0)
  w = f32[4,4] parameter(1)
  g0 = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g1 = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[4,4], f32[4,4]) tuple(g0, g1)
}
)";
  LowerOptions options;
  options.overrides = {{"g1", 1}};
  auto l = lower_text(kTwoGemms, options);
  ASSERT_TRUE(l);
  EXPECT_EQ(signature(l->thunks()), (Sig{"rec s0 e0", "wait s1 e0", "s1 g1", "rec s1 e1", "s0 g0", "wait s0 e1"}));
}

TEST(StreamAssignment, OverrideOfAsyncStartToItsParentRunsInline) {
  LowerOptions options;
  options.overrides = {{"s", 0}};
  auto l = lower_text(kExplicitAsync, options);
  ASSERT_TRUE(l);
  EXPECT_EQ(signature(l->thunks()), (Sig{"s0 n", "s0 y", "s0 r"}));
  EXPECT_EQ(l->device().num_events, 0);
}

TEST(StreamAssignment, UnknownOverrideIsAnErrorFixedOneAWarning) {
  auto parsed = hlo::parse_program(kQueueId, "q.hlo");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  LowerOptions options;
  options.overrides = {{"nope", 1}};
  auto bad = lower(*parsed, options);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(bad.status().message().find("nope"), std::string::npos);

  options.overrides = {{"x", 1}};
  auto fixed = lower(*parsed, options);
  ASSERT_TRUE(fixed.is_ok()) << fixed.status().message();
  ASSERT_EQ(fixed->warnings.size(), 1u);
  EXPECT_NE(fixed->warnings[0].find("cannot move"), std::string::npos);
  EXPECT_FALSE(testing::stream_entry(*fixed, "x")->overridden);

  options.overrides = {{"a", -1}};
  EXPECT_FALSE(lower(*parsed, options).is_ok());
}

}  // namespace
}  // namespace sl::sched
