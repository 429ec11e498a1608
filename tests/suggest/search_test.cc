#include "sim/suggest/search.h"

#include <gtest/gtest.h>

#include "sim/suggest/sim_evaluator.h"
#include "tests/suggest/suggest_test_util.h"

namespace sl::sim {
namespace {

using suggest_test::h200;
using suggest_test::load;

// A made-up landscape: each instruction has a preferred stream, each miss costs its weight.
SearchSpace toy_space(int dims) {
  SearchSpace space;
  for (int i = 0; i < dims; ++i) space.dimensions.push_back({"i" + std::to_string(i), MoveKind::kCompute, 0});
  space.compute_streams = 3;
  space.comm_streams = 1;
  space.comm_sms = {32, 0};
  return space;
}

Evaluator toy_evaluator(int dims, int64_t* calls) {
  return [dims, calls](const sched::StreamOverrides& overrides, int comm_sms) -> Result<int64_t> {
    ++*calls;
    int64_t cost = 1000 + (comm_sms == 0 ? 0 : 7);
    for (int i = 0; i < dims; ++i) {
      auto it = overrides.find("i" + std::to_string(i));
      const int stream = it == overrides.end() ? 0 : it->second;
      const int wanted = i % 3 == 0 ? 0 : 1;  // one extra stream for two in three
      if (stream != wanted) cost += 10 * (i + 1);
    }
    return cost;
  };
}

TEST(SuggestSearch, ExhaustiveFindsTheMinimumAndCountsEveryAssignment) {
  const SearchSpace space = toy_space(6);
  int64_t calls = 0;
  Result<SearchResult> r = search(space, toy_evaluator(6, &calls), {});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_TRUE(r->exhaustive);
  // The original is one of the enumerated assignments: simulated once.
  EXPECT_EQ(static_cast<uint64_t>(r->simulations), r->space_size);
  EXPECT_EQ(calls, r->simulations);
  ASSERT_FALSE(r->candidates.empty());
  EXPECT_EQ(r->candidates.front().makespan_ns, 1000);
  EXPECT_EQ(r->candidates.front().assignment.comm_sms, 0);
  EXPECT_EQ(r->original_makespan_ns, 1000 + 7 + 10 * (2 + 3 + 5 + 6));
}

TEST(SuggestSearch, LocalSearchStaysWithinItsBudget) {
  const SearchSpace space = toy_space(14);
  int64_t calls = 0;
  SearchOptions options;
  options.mode = SearchMode::kLocal;
  options.budget = 400;
  Result<SearchResult> r = search(space, toy_evaluator(14, &calls), options);
  ASSERT_TRUE(r.is_ok());
  EXPECT_FALSE(r->exhaustive);
  EXPECT_LE(r->simulations, options.budget + 1);
  EXPECT_EQ(calls, r->simulations);
  ASSERT_FALSE(r->candidates.empty());
  EXPECT_EQ(r->candidates.front().makespan_ns, 1000);  // separable: hill climbing reaches it
}

TEST(SuggestSearch, CandidatesAreDistinctBetterFirstAndNeverTheOriginal) {
  const SearchSpace space = toy_space(5);
  int64_t calls = 0;
  SearchOptions options;
  options.top = 50;
  Result<SearchResult> r = search(space, toy_evaluator(5, &calls), options);
  ASSERT_TRUE(r.is_ok());
  for (size_t k = 0; k < r->candidates.size(); ++k) {
    EXPECT_NE(r->candidates[k].makespan_ns, r->original_makespan_ns);
    if (k > 0) {
      EXPECT_LT(r->candidates[k - 1].makespan_ns, r->candidates[k].makespan_ns);
    }
    EXPECT_EQ(r->candidates[k].overrides, overrides_for(space, r->candidates[k].assignment));
  }
  // The best needs exactly the two misplaced instructions moved (i1, i2 onto one extra stream).
  EXPECT_EQ(r->candidates.front().overrides, (sched::StreamOverrides{{"i1", 1}, {"i2", 1}, {"i4", 1}}));
}

TEST(SuggestSearch, InfeasibleAssignmentsAreCountedAndSkipped) {
  const SearchSpace space = toy_space(3);
  int64_t calls = 0;
  Evaluator inner = toy_evaluator(3, &calls);
  Evaluator evaluate = [&inner](const sched::StreamOverrides& o, int sms) -> Result<int64_t> {
    if (o.count("i1") && o.at("i1") == 2) return runtime_error("deadlock");
    return inner(o, sms);
  };
  Result<SearchResult> r = search(space, evaluate, {});
  ASSERT_TRUE(r.is_ok());
  EXPECT_GT(r->infeasible, 0);
  for (const Candidate& c : r->candidates) EXPECT_FALSE(c.overrides.count("i1") && c.overrides.at("i1") == 2);
}

TEST(SuggestSearch, AnOriginalThatFailsIsAnError) {
  const SearchSpace space = toy_space(2);
  Evaluator evaluate = [](const sched::StreamOverrides&, int) -> Result<int64_t> { return runtime_error("boom"); };
  Result<SearchResult> r = search(space, evaluate, {});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "boom");
}

TEST(SuggestSearch, ForcedExhaustiveRefusesAHugeSpace) {
  const SearchSpace space = toy_space(40);
  int64_t calls = 0;
  SearchOptions options;
  options.mode = SearchMode::kExhaustive;
  EXPECT_FALSE(search(space, toy_evaluator(40, &calls), options).is_ok());
  EXPECT_EQ(calls, 0);
}

std::vector<std::pair<Assignment, int64_t>> outcome(const SearchResult& r) {
  std::vector<std::pair<Assignment, int64_t>> out;
  for (const Candidate& c : r.candidates) out.emplace_back(c.assignment, c.makespan_ns);
  return out;
}

TEST(SuggestSearch, LocalSearchIsDeterministicPerSeed) {
  hlo::Module module = load("fsdp_per_layer_allgather.hlo");
  Result<SearchSpace> space = build_space(module, {});
  ASSERT_TRUE(space.is_ok());
  const Evaluator evaluate = make_sim_evaluator(module, h200(), {});
  SearchOptions options;
  options.mode = SearchMode::kLocal;
  options.budget = 300;
  options.top = 10;
  options.seed = 7;
  Result<SearchResult> a = search(*space, evaluate, options);
  Result<SearchResult> b = search(*space, evaluate, options);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(outcome(*a), outcome(*b));
  EXPECT_EQ(a->simulations, b->simulations);
  options.seed = 8;
  Result<SearchResult> c = search(*space, evaluate, options);
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(c->original_makespan_ns, a->original_makespan_ns);
}

// The acceptance bar of the issue: wherever enumeration is possible, the
// local search gets within 1% of its best (bench/suggest_bench.cc times it).
TEST(SuggestSearch, LocalSearchComesWithinOnePercentOfEnumerationOnEverySample) {
  for (const std::string& name : suggest_test::sample_names()) {
    hlo::Module module = load(name);
    Result<SearchSpace> space = build_space(module, {});
    ASSERT_TRUE(space.is_ok()) << name;
    const Evaluator evaluate = make_sim_evaluator(module, h200(), {});
    SearchOptions exhaustive;
    exhaustive.mode = SearchMode::kExhaustive;
    Result<SearchResult> reference = search(*space, evaluate, exhaustive);
    ASSERT_TRUE(reference.is_ok()) << name << ": " << reference.status().message();
    int64_t best = reference->original_makespan_ns;
    if (!reference->candidates.empty()) best = std::min(best, reference->candidates.front().makespan_ns);
    for (uint64_t seed : {0, 1, 2}) {
      SearchOptions local;
      local.mode = SearchMode::kLocal;
      local.budget = 500;
      local.seed = seed;
      Result<SearchResult> found = search(*space, evaluate, local);
      ASSERT_TRUE(found.is_ok()) << name;
      int64_t got = found->original_makespan_ns;
      if (!found->candidates.empty()) got = std::min(got, found->candidates.front().makespan_ns);
      EXPECT_LE(static_cast<double>(got), 1.01 * static_cast<double>(best)) << name << " seed " << seed;
    }
  }
}

// The evaluator's makespan is what a `streamlens run --backend sim` records.
TEST(SuggestSearch, SimEvaluatorMatchesTheSimBackend) {
  hlo::Module module = load("windowed_einsum.hlo");
  const Evaluator evaluate = make_sim_evaluator(module, h200(), {});
  Result<int64_t> original = evaluate({}, 32);
  Result<int64_t> moved = evaluate({{"gemm.hi-start", 1}}, 32);
  ASSERT_TRUE(original.is_ok() && moved.is_ok());
  EXPECT_NE(*original, *moved);
  EXPECT_FALSE(evaluate({{"no-such-instruction", 1}}, 32).is_ok());
}

}  // namespace
}  // namespace sl::sim
