#pragma once
// The search of `streamlens suggest` (docs/cli.md): every canonical
// assignment when the space is small, otherwise a local search seeded with
// the program's own assignment -- hill climbing over single moves, then
// FlexFlow's MCMC: propose a random move, accept it by the Metropolis rule on
// the predicted makespan, restart from the best after a long run without
// progress. Deterministic for a given seed; the evaluator is called at most
// `budget` times (plus once for the original).

#include <cstdint>
#include <functional>
#include <vector>

#include "core/common/status.h"
#include "core/sched/streams.h"
#include "sim/suggest/space.h"

namespace sl::sim {

// Predicted makespan of the program with these overrides and --comm-sms.
using Evaluator = std::function<Result<int64_t>(const sched::StreamOverrides& overrides, int comm_sms)>;

enum class SearchMode { kAuto, kExhaustive, kLocal };

inline constexpr uint64_t kExhaustiveLimit = 4096;

struct SearchOptions {
  SearchMode mode = SearchMode::kAuto;  // auto: exhaustive when the space is <= exhaustive_limit
  int64_t budget = 2000;                // local search: simulations
  int top = 5;
  uint64_t seed = 0;
  uint64_t exhaustive_limit = kExhaustiveLimit;
  // Called after each simulation with simulations done / planned.
  std::function<void(int64_t done, int64_t total)> progress;
};

struct Candidate {
  Assignment assignment;
  sched::StreamOverrides overrides;  // what differs from the program (overrides_for)
  int64_t makespan_ns = 0;
};

struct SearchResult {
  int64_t original_makespan_ns = 0;
  // Best first, at most `top`, never the original. Assignments with the
  // original's makespan or that of a better-ranked one are left out (ties
  // rank the one with fewer moves first), so the list shows distinct
  // outcomes; worse ones are listed when nothing is better.
  std::vector<Candidate> candidates;
  bool exhaustive = false;
  uint64_t space_size = 0;
  int64_t simulations = 0;  // evaluator calls, the original's included
  int64_t infeasible = 0;   // assignments the evaluator rejected (counted, skipped)
};

// Errors: the original assignment itself fails to evaluate, or bad options.
Result<SearchResult> search(const SearchSpace& space, const Evaluator& evaluate, const SearchOptions& options);

}  // namespace sl::sim
