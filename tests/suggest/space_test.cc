#include "sim/suggest/space.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/suggest/suggest_test_util.h"

namespace sl::sim {
namespace {

using suggest_test::load;

const Dimension* find(const SearchSpace& space, const std::string& name) {
  for (const Dimension& d : space.dimensions) {
    if (d.instruction == name) return &d;
  }
  return nullptr;
}

TEST(SuggestSpace, WindowedEinsumMovesTheGemmsAndThePermute) {
  hlo::Module module = load("windowed_einsum.hlo");
  Result<SearchSpace> space = build_space(module, {});
  ASSERT_TRUE(space.is_ok()) << space.status().message();
  ASSERT_EQ(space->dimensions.size(), 3u);
  const Dimension* lo = find(*space, "gemm.lo-start");
  const Dimension* hi = find(*space, "gemm.hi-start");
  const Dimension* cp = find(*space, "cp-start");
  ASSERT_TRUE(lo && hi && cp);
  EXPECT_EQ(lo->kind, MoveKind::kCompute);
  EXPECT_EQ(lo->original_stream, 1);
  EXPECT_EQ(hi->original_stream, 2);
  EXPECT_EQ(cp->kind, MoveKind::kAsyncCollective);
  EXPECT_EQ(cp->original_stream, sched::kCommStreamBase);
  // The dot inside %gemm follows its async-start and is no dimension of its own.
  EXPECT_EQ(find(*space, "dot"), nullptr);
  EXPECT_EQ(space->compute_streams, 3);
  EXPECT_EQ(space->comm_streams, 1);
  EXPECT_EQ(space->comm_sms, (std::vector<int>{32, 0, 16, 24, 48}));
}

TEST(SuggestSpace, CommSmsStaysFixedWithoutCollectives) {
  hlo::Module module = load("two_gemms_one_stream.hlo");
  Result<SearchSpace> space = build_space(module, {});
  ASSERT_TRUE(space.is_ok());
  EXPECT_EQ(space->comm_sms, std::vector<int>{32});
  EXPECT_EQ(space->dimensions.size(), 2u);
  // (0,0) (0,1) (1,0) (1,1) (1,2): extra streams numbered by first use.
  EXPECT_EQ(space_size(*space), 5u);
}

TEST(SuggestSpace, SizeCountsExactlyTheEnumeratedCanonicalAssignments) {
  for (const std::string& name : suggest_test::sample_names()) {
    hlo::Module module = load(name);
    Result<SearchSpace> space = build_space(module, {});
    ASSERT_TRUE(space.is_ok()) << name;
    std::vector<Assignment> all = enumerate(*space, 100000);
    EXPECT_EQ(all.size(), space_size(*space)) << name;
    std::set<Assignment> unique(all.begin(), all.end());
    EXPECT_EQ(unique.size(), all.size()) << name;
    for (const Assignment& a : all) EXPECT_EQ(canonical(*space, a), a) << name;
    EXPECT_TRUE(unique.count(canonical(*space, original_assignment(*space)))) << name;
  }
}

TEST(SuggestSpace, CanonicalNumbersExtraStreamsByFirstUse) {
  SearchSpace space;
  space.dimensions = {{"a", MoveKind::kCompute, 0}, {"b", MoveKind::kCompute, 0}, {"c", MoveKind::kCompute, 0},
                      {"d", MoveKind::kAsyncCollective, 100}, {"e", MoveKind::kAsyncCollective, 100}};
  space.compute_streams = 3;
  space.comm_streams = 2;
  space.comm_sms = {32};
  Assignment a{{2, 0, 1, 101, 100}, 32};
  EXPECT_EQ(canonical(space, a).streams, (std::vector<int>{1, 0, 2, 100, 101}));
}

TEST(SuggestSpace, OverridesNameOnlyWhatMoves) {
  hlo::Module module = load("windowed_einsum.hlo");
  Result<SearchSpace> space = build_space(module, {});
  ASSERT_TRUE(space.is_ok());
  Assignment a = original_assignment(*space);
  EXPECT_TRUE(overrides_for(*space, a).empty());
  for (size_t i = 0; i < space->dimensions.size(); ++i) {
    if (space->dimensions[i].instruction == "gemm.hi-start") a.streams[i] = 0;
  }
  EXPECT_EQ(overrides_for(*space, a), (sched::StreamOverrides{{"gemm.hi-start", 0}}));
  EXPECT_EQ(stream_spelling(sched::kCommStreamBase), "comm");
  EXPECT_EQ(stream_spelling(101), "101");
}

TEST(SuggestSpace, RejectsTooFewStreamsForTheProgram) {
  hlo::Module module = load("windowed_einsum.hlo");  // uses compute streams 1 and 2
  SpaceOptions options;
  options.compute_streams = 2;
  EXPECT_FALSE(build_space(module, options).is_ok());
}

}  // namespace
}  // namespace sl::sim
