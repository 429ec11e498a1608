#include "sim/suggest/search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include <fmt/format.h>

namespace sl::sim {
namespace {

// Exhaustive search on request stops being sensible long before this.
constexpr uint64_t kForcedExhaustiveLimit = 1'000'000;

// Metropolis temperature, relative to the current makespan: at first a move
// 5% worse is taken with probability 1/e, at the end one 0.2% worse.
constexpr double kStartTemperature = 0.05;
constexpr double kEndTemperature = 0.002;

class Searcher {
 public:
  Searcher(const SearchSpace& space, const Evaluator& evaluate, const SearchOptions& options)
      : space_(space), evaluate_(evaluate), options_(options), rng_(options.seed) {}

  Result<SearchResult> run() {
    SearchResult result;
    result.space_size = space_size(space_);
    space_size_ = result.space_size;
    bool exhaustive = options_.mode == SearchMode::kExhaustive ||
                      (options_.mode == SearchMode::kAuto && result.space_size <= options_.exhaustive_limit);
    if (options_.mode == SearchMode::kExhaustive && result.space_size > kForcedExhaustiveLimit) {
      return usage_error(fmt::format("the space has {} assignments: too many to enumerate (at most {})",
                                     result.space_size, kForcedExhaustiveLimit));
    }
    if (!exhaustive && options_.budget < 1) return usage_error("the search budget must be >= 1");
    if (options_.top < 1) return usage_error("--top must be >= 1");
    // Enumeration includes the original (canonically numbered): one simulation each.
    planned_ = exhaustive ? static_cast<int64_t>(result.space_size) : options_.budget + 1;

    // The program as written, without overrides: the baseline every candidate is measured against.
    original_ = canonical(space_, original_assignment(space_));
    Result<int64_t> original = evaluate_({}, space_.comm_sms.front());
    ++simulations_;
    if (!original) return original.status();
    seen_[original_] = *original;
    original_makespan_ = *original;
    report();

    if (exhaustive) {
      for (const Assignment& a : enumerate(space_, result.space_size)) score(a);
    } else {
      local_search(*original);
    }
    result.exhaustive = exhaustive;
    result.original_makespan_ns = *original;
    result.simulations = simulations_;
    result.infeasible = infeasible_;
    result.candidates = ranked();
    return result;
  }

 private:
  bool out_of_budget() const { return simulations_ >= planned_; }

  void report() const {
    if (options_.progress) options_.progress(simulations_, planned_);
  }

  // Makespan of a canonical assignment; nullopt when infeasible or out of budget.
  std::optional<int64_t> score(const Assignment& assignment) {
    auto it = seen_.find(assignment);
    if (it != seen_.end()) return it->second;
    if (out_of_budget()) return std::nullopt;
    Result<int64_t> makespan = evaluate_(overrides_for(space_, assignment), assignment.comm_sms);
    ++simulations_;
    report();
    std::optional<int64_t> value;
    if (makespan) {
      value = *makespan;
    } else {
      ++infeasible_;
    }
    seen_.emplace(assignment, value);
    return value;
  }

  uint64_t draw(uint64_t n) { return n <= 1 ? 0 : rng_() % n; }
  double uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

  // Every assignment one move away, in a fixed order.
  std::vector<Assignment> neighbours(const Assignment& from) const {
    std::vector<Assignment> out;
    for (size_t i = 0; i < space_.dimensions.size(); ++i) {
      for (int s : stream_options(space_, space_.dimensions[i])) {
        if (s == from.streams[i]) continue;
        Assignment n = from;
        n.streams[i] = s;
        out.push_back(canonical(space_, n));
      }
    }
    for (int sms : space_.comm_sms) {
      if (sms == from.comm_sms) continue;
      Assignment n = from;
      n.comm_sms = sms;
      out.push_back(n);
    }
    return out;
  }

  // One random move: a dimension's stream, or the --comm-sms value.
  void mutate(Assignment& a) {
    const size_t dims = space_.dimensions.size();
    const size_t choices = dims + (space_.comm_sms.size() > 1 ? 1 : 0);
    if (choices == 0) return;
    const size_t pick = draw(choices);
    if (pick == dims) {
      a.comm_sms = space_.comm_sms[draw(space_.comm_sms.size())];
      return;
    }
    const std::vector<int> options = stream_options(space_, space_.dimensions[pick]);
    a.streams[pick] = options[draw(options.size())];
  }

  void local_search(int64_t original_makespan) {
    // Reserved for undoing the best's needless moves at the end.
    const int64_t reserve = std::min<int64_t>(static_cast<int64_t>(space_.dimensions.size()), options_.budget / 10);
    const int64_t search_planned = planned_ - reserve;
    Assignment current = original_;
    int64_t current_cost = original_makespan;
    best_ = current;
    best_cost_ = current_cost;

    // Hill climbing: the best single move, while one helps.
    while (simulations_ < search_planned) {
      std::optional<std::pair<Assignment, int64_t>> step;
      for (const Assignment& n : neighbours(current)) {
        if (simulations_ >= search_planned && !seen_.count(n)) break;
        std::optional<int64_t> c = score(n);
        if (c && *c < current_cost && (!step || *c < step->second)) step = {{n, *c}};
      }
      if (!step) break;
      std::tie(current, current_cost) = *step;
      note_best(current, current_cost);
    }

    // MCMC from the local optimum.
    const int64_t patience = std::max<int64_t>(64, options_.budget / 8);
    const int64_t max_proposals = 50 * options_.budget + 1000;
    int64_t since_best = 0;
    // Stops early once every assignment has been seen (a small space searched locally).
    for (int64_t proposals = 0; simulations_ < search_planned && proposals < max_proposals && seen_.size() < space_size_;
         ++proposals) {
      Assignment proposal = current;
      mutate(proposal);
      if (draw(4) == 0) mutate(proposal);  // now and then two moves at once, to leave a basin
      proposal = canonical(space_, proposal);
      if (proposal == current) continue;
      std::optional<int64_t> cost = score(proposal);
      if (!cost) continue;
      const double progress = static_cast<double>(simulations_) / static_cast<double>(std::max<int64_t>(search_planned, 1));
      const double temperature = kStartTemperature * std::pow(kEndTemperature / kStartTemperature, progress);
      const double delta =
          static_cast<double>(*cost - current_cost) / static_cast<double>(std::max<int64_t>(current_cost, 1));
      if (delta <= 0 || uniform() < std::exp(-delta / temperature)) {
        current = proposal;
        current_cost = *cost;
      }
      if (note_best(proposal, *cost)) {
        since_best = 0;
      } else if (++since_best > patience) {
        current = best_;
        current_cost = best_cost_;
        since_best = 0;
      }
    }
    simplify_best();
  }

  bool note_best(const Assignment& a, int64_t cost) {
    if (cost >= best_cost_) return false;
    best_ = a;
    best_cost_ = cost;
    return true;
  }

  // Moves of the best that change nothing go back to the program's own stream.
  void simplify_best() {
    const Assignment plain = original_assignment(space_);
    for (size_t i = 0; i < space_.dimensions.size(); ++i) {
      if (best_.streams[i] == plain.streams[i]) continue;
      Assignment reverted = best_;
      reverted.streams[i] = plain.streams[i];
      reverted = canonical(space_, reverted);
      std::optional<int64_t> cost = score(reverted);
      if (cost && *cost <= best_cost_) {
        best_ = reverted;
        best_cost_ = *cost;
      }
    }
  }

  std::vector<Candidate> ranked() const {
    std::vector<Candidate> all;
    for (const auto& [assignment, makespan] : seen_) {
      if (!makespan || assignment == original_ || *makespan == original_makespan_) continue;
      all.push_back({assignment, overrides_for(space_, assignment), *makespan});
    }
    // Ties: fewer moves first, then the original's --comm-sms, then a fixed order.
    const int plain_sms = space_.comm_sms.front();
    auto key = [plain_sms](const Candidate& c) {
      return std::tuple<int64_t, size_t, bool, const Assignment&>(c.makespan_ns, c.overrides.size(),
                                                                  c.assignment.comm_sms != plain_sms, c.assignment);
    };
    std::sort(all.begin(), all.end(), [&key](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
    std::vector<Candidate> out;
    for (Candidate& c : all) {
      if (static_cast<int>(out.size()) >= options_.top) break;
      if (!out.empty() && out.back().makespan_ns == c.makespan_ns) continue;
      out.push_back(std::move(c));
    }
    return out;
  }

  const SearchSpace& space_;
  const Evaluator& evaluate_;
  const SearchOptions& options_;
  std::mt19937_64 rng_;
  std::map<Assignment, std::optional<int64_t>> seen_;
  Assignment original_;
  Assignment best_;
  int64_t best_cost_ = 0;
  int64_t original_makespan_ = 0;
  uint64_t space_size_ = 0;
  int64_t simulations_ = 0;
  int64_t planned_ = 0;
  int64_t infeasible_ = 0;
};

}  // namespace

Result<SearchResult> search(const SearchSpace& space, const Evaluator& evaluate, const SearchOptions& options) {
  Searcher searcher(space, evaluate, options);
  return searcher.run();
}

}  // namespace sl::sim
