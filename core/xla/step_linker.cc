#include "core/xla/step_linker.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "core/trace/kernel_class.h"

namespace sl::xla {
namespace {

using trace::Event;
using trace::EventKind;

// What a captured record can be matched with.
enum class Token { kNone, kKernel, kGemm, kCopy, kMemset, kCollective, kDnn };

struct Captured {
  size_t event = 0;     // index into trace.events
  Token token = Token::kNone;
  uint32_t name = 0;    // interned kernel name (kKernel)
};

Token plan_token(LaunchKind k) {
  switch (k) {
    case LaunchKind::kKernel: return Token::kKernel;
    case LaunchKind::kGemm: return Token::kGemm;
    case LaunchKind::kCopy: return Token::kCopy;
    case LaunchKind::kMemset: return Token::kMemset;
    case LaunchKind::kCollective: return Token::kCollective;
    case LaunchKind::kDnn: return Token::kDnn;
  }
  return Token::kNone;
}

struct PlanIndex {
  std::vector<Token> token;
  std::vector<uint32_t> name;        // interned kernel names of kKernel items (0 otherwise)
  std::vector<size_t> anchors;       // plan positions that find steps
  std::set<uint32_t> kernel_names;
};

PlanIndex index_plan(const LaunchPlan& plan, trace::StringTable& strings) {
  PlanIndex ix;
  for (const PlannedLaunch& l : plan.launches) {
    ix.token.push_back(plan_token(l.kind));
    uint32_t name = l.kind == LaunchKind::kKernel ? strings.intern(l.kernel) : 0;
    ix.name.push_back(name);
    if (name != 0) ix.kernel_names.insert(name);
  }
  // XLA's own kernels find steps; a module of library calls only is found by
  // the kinds of its launches.
  for (size_t i = 0; i < ix.token.size(); ++i) {
    if (ix.kernel_names.empty() || ix.token[i] == Token::kKernel) ix.anchors.push_back(i);
  }
  return ix;
}

Token captured_token(const trace::Trace& t, const Event& e, const PlanIndex& ix, bool* autotuning) {
  *autotuning = false;
  const std::string& name = t.name_of(e);
  if (e.kind == EventKind::kMemset) return Token::kMemset;
  if (e.kind == EventKind::kCopy) return name == "memcpy DtoD" ? Token::kCopy : Token::kNone;
  if (ix.kernel_names.count(e.name) != 0) return Token::kKernel;
  if (trace::is_autotuning_kernel(name)) {
    *autotuning = true;
    return Token::kNone;
  }
  if (trace::is_dnn_kernel(name)) return Token::kDnn;  // before GEMMs: cuDNN's implicit GEMMs
  const EventKind k = trace::classify_kernel(name);
  if (k == EventKind::kGemm) return Token::kGemm;
  if (k == EventKind::kCollective) return Token::kCollective;
  return Token::kNone;
}

bool matches(const PlanIndex& ix, size_t item, const Captured& c) {
  if (ix.token[item] != c.token) return false;
  return c.token != Token::kKernel || ix.name[item] == c.name;
}

// A repeated trip (LaunchPlan::repeated_trips) in anchor positions: its
// first anchor, and the first anchor after it (the anchor count at the plan's end).
struct AnchorTrip {
  size_t first = 0;
  size_t after = 0;
};

std::vector<AnchorTrip> anchor_trips(const LaunchPlan& plan, const PlanIndex& ix) {
  std::vector<AnchorTrip> out;
  for (const RepeatedTrip& r : plan.repeated_trips) {
    const auto lo = std::lower_bound(ix.anchors.begin(), ix.anchors.end(), r.first);
    const auto hi = std::lower_bound(ix.anchors.begin(), ix.anchors.end(), r.end);
    if (lo == hi) continue;  // no anchor inside: its trips cannot be followed
    out.push_back({static_cast<size_t>(lo - ix.anchors.begin()), static_cast<size_t>(hi - ix.anchors.begin())});
  }
  return out;
}

// Positions (into `seq`) of the first and last anchor of each step. After a
// repeated trip's last anchor, a record matching its first anchor starts
// the trip again (a while loop without a known trip count ran once more).
std::vector<std::pair<size_t, size_t>> find_steps(const std::vector<Captured>& seq, const PlanIndex& ix,
                                                  const std::vector<AnchorTrip>& trips, const LinkOptions& options) {
  std::vector<std::pair<size_t, size_t>> steps;
  const size_t n = ix.anchors.size();
  if (n == 0) return steps;
  const size_t max_misses = std::max<size_t>(3, static_cast<size_t>(options.max_miss_fraction * n));
  auto repeat_from = [&](size_t j, const Captured& c) -> std::optional<size_t> {
    for (const AnchorTrip& t : trips) {
      if (t.after == j && matches(ix, ix.anchors[t.first], c)) return t.first;
    }
    return std::nullopt;
  };
  // A step whose anchors are all matched stays open while a trip that ends
  // the plan may still repeat.
  const bool may_repeat_at_end = std::any_of(trips.begin(), trips.end(), [&](const AnchorTrip& t) { return t.after == n; });
  size_t j = 0, misses = 0, start = 0, last = 0;
  bool complete = false;
  auto matched = [&](size_t p) {
    last = p;
    if (j < n) return;
    if (may_repeat_at_end) {
      complete = true;
      return;
    }
    steps.emplace_back(start, p);
    j = 0;
    misses = 0;
  };
  for (size_t p = 0; p < seq.size(); ++p) {
    const Captured& c = seq[p];
    if (c.token == Token::kNone) continue;
    // Kernel anchors: only the plan's own kernels move the match.
    if (!ix.kernel_names.empty() && c.token != Token::kKernel) continue;
    if (complete) {
      if (auto again = repeat_from(n, c)) {
        complete = false;
        j = *again + 1;
        matched(p);
        continue;
      }
      steps.emplace_back(start, last);
      complete = false;
      j = 0;
      misses = 0;
    }
    if (matches(ix, ix.anchors[j], c)) {
      if (j == 0) start = p;
      ++j;
      matched(p);
    } else if (auto again = j > 0 ? repeat_from(j, c) : std::nullopt) {
      j = *again + 1;
      misses = 0;
      matched(p);
    } else if (matches(ix, ix.anchors[0], c)) {
      start = p;
      j = 1;
      misses = 0;
      matched(p);
    } else if (j > 0 && ++misses > max_misses) {
      j = 0;
      misses = 0;
    }
  }
  if (complete) steps.emplace_back(start, last);
  return steps;
}

// A record no plan item ahead takes, but that one of a repeated trip's
// first items does, once the trip's items are taken: the trip runs again,
// its items free and the cursor at its start. SIZE_MAX: none.
template <typename Search>
size_t next_trip(const LaunchPlan& plan, const PlanIndex& ix, const Captured& c, std::vector<bool>& used,
                 size_t& cursor, size_t lookahead, Search search) {
  for (const RepeatedTrip& r : plan.repeated_trips) {
    if (cursor < r.first || r.end > used.size()) continue;
    bool starts_it = false;
    for (size_t q = r.first; q < std::min(r.end, r.first + lookahead) && !starts_it; ++q) {
      starts_it = used[q] && matches(ix, q, c);
    }
    if (!starts_it) continue;
    std::fill(used.begin() + static_cast<std::ptrdiff_t>(r.first), used.begin() + static_cast<std::ptrdiff_t>(r.end),
              false);
    cursor = r.first;
    return search();
  }
  return SIZE_MAX;
}

}  // namespace

LinkSummary link_steps(trace::Trace& t, const LaunchPlan& plan, const LinkOptions& options) {
  LinkSummary summary;
  PlanIndex ix = index_plan(plan, t.strings);
  std::vector<uint32_t> instruction(plan.launches.size());
  for (size_t i = 0; i < plan.launches.size(); ++i) instruction[i] = t.strings.intern(plan.launches[i].instruction);

  std::map<int32_t, std::vector<Captured>> by_device;
  for (size_t i = 0; i < t.events.size(); ++i) {
    Event& e = t.events[i];
    e.iteration = -1;
    if (e.kind == EventKind::kWait) continue;
    bool autotuning = false;
    Captured c{i, captured_token(t, e, ix, &autotuning), e.name};
    if (autotuning) ++summary.autotuning_kernels;
    by_device[e.device].push_back(c);
  }
  const std::vector<AnchorTrip> trips = anchor_trips(plan, ix);
  const size_t lead = ix.anchors.empty() ? 0 : ix.anchors.front();
  const size_t trail_from = ix.anchors.empty() ? 0 : ix.anchors.back() + 1;

  for (auto& [device, seq] : by_device) {
    std::stable_sort(seq.begin(), seq.end(), [&](const Captured& a, const Captured& b) {
      const Event& x = t.events[a.event];
      const Event& y = t.events[b.event];
      return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.correlation < y.correlation;
    });
    const auto steps = find_steps(seq, ix, trips, options);
    size_t floor = 0;  // nothing before this position belongs to a later step
    for (size_t k = 0; k < steps.size(); ++k) {
      auto [first, last] = steps[k];
      const size_t ceiling = k + 1 < steps.size() ? steps[k + 1].first : seq.size();
      // Widen the step by the plan's launches before its first and after its
      // last anchor (a cuBLAS call that opens or closes the step).
      for (size_t need = lead; need > 0 && first > floor;) {
        if (seq[first - 1].token != Token::kNone && !matches(ix, need - 1, seq[first - 1])) break;
        --first;
        if (seq[first].token != Token::kNone) --need;
      }
      for (size_t item = trail_from; item < plan.launches.size() && last + 1 < ceiling;) {
        if (seq[last + 1].token != Token::kNone && !matches(ix, item, seq[last + 1])) break;
        ++last;
        if (seq[last].token != Token::kNone) ++item;
      }
      // A loop condition that ends the plan is followed by its predicate copy.
      if (!plan.launches.empty() && !plan.launches.back().condition_of.empty() && last + 1 < ceiling &&
          t.events[seq[last + 1].event].kind == EventKind::kCopy && t.name_of(t.events[seq[last + 1].event]) == "memcpy DtoH") {
        ++last;
      }
      floor = last + 1;
      // Match in order, a few plan items ahead; a library GEMM's second
      // kernel (split-K) is its call's. A cuDNN call runs records no dump
      // names (cuDNN's kernels, memsets, kernels of its legacy engines named
      // without "cudnn"): when the plan's next item is a cuDNN call, such a
      // record opens it, and the ones after it are the call's until a record
      // of another plan item comes. Two cuDNN calls in a row part at a memset
      // after the first call's first kernel (cuDNN zeroes its workspace first).
      std::vector<bool> used(plan.launches.size(), false);
      size_t cursor = 0;
      int64_t last_gemm_instruction = -1;
      int64_t open_dnn_call = -1;
      int64_t open_condition = -1;  // a loop condition's launch, whose predicate copy may follow
      bool open_call_ran_kernel = false;
      size_t after_last_taken = 0;
      auto take = [&](size_t q) {
        used[q] = true;
        after_last_taken = std::max(after_last_taken, q + 1);
        while (cursor < used.size() && used[cursor]) ++cursor;
      };
      const int32_t step = static_cast<int32_t>(k);
      int64_t start_ns = INT64_MAX, end_ns = INT64_MIN;
      for (size_t p = first; p <= last; ++p) {
        const Captured& c = seq[p];
        Event& e = t.events[c.event];
        e.iteration = step;
        start_ns = std::min(start_ns, e.start_ns);
        end_ns = std::max(end_ns, e.end_ns);
        ++summary.events_in_steps;
        summary.work_ns_in_steps += e.duration_ns();
        const Token next = cursor < used.size() ? ix.token[cursor] : Token::kNone;
        const bool next_is_dnn = next == Token::kDnn;
        const bool unnamed = e.kind != EventKind::kCopy && (c.token == Token::kNone || c.token == Token::kDnn ||
                                                            (c.token == Token::kMemset && next != Token::kMemset));
        size_t found = SIZE_MAX;
        if (unnamed && open_dnn_call >= 0 &&
            !(next_is_dnn && c.token == Token::kMemset && open_call_ran_kernel)) {
          found = static_cast<size_t>(open_dnn_call);
          open_call_ran_kernel = open_call_ran_kernel || c.token != Token::kMemset;
        } else if (unnamed && next_is_dnn) {
          found = cursor;
          take(found);
          open_dnn_call = static_cast<int64_t>(found);
          open_call_ran_kernel = c.token != Token::kMemset;
          last_gemm_instruction = -1;
        } else if (c.token == Token::kNone) {
          if (open_condition >= 0 && e.kind == EventKind::kCopy && t.name_of(e) == "memcpy DtoH") {
            // WhileThunk's predicate copy after a loop's condition: the loop's.
            e.instruction = t.strings.intern(plan.launches[static_cast<size_t>(open_condition)].condition_of);
            open_condition = -1;
            ++summary.events_linked;
            summary.work_ns_linked += e.duration_ns();
          }
          continue;
        } else if (c.token == Token::kGemm && last_gemm_instruction >= 0 &&
                   t.name_of(e).find("splitKreduce") != std::string::npos) {
          // cuBLAS's split-K reduction finishes the call before it; searched
          // for like a GEMM, it would take the plan's next cuBLAS call and
          // shift every call after it by one.
          found = static_cast<size_t>(last_gemm_instruction);
        } else {
          auto search_from = [&](size_t from) {
            for (size_t q = from; q < std::min(plan.launches.size(), from + options.lookahead); ++q) {
              if (!used[q] && matches(ix, q, c)) return q;
            }
            return SIZE_MAX;
          };
          auto search = [&] { return search_from(cursor); };
          found = search();
          if (found == SIZE_MAX) found = next_trip(plan, ix, c, used, cursor, options.lookahead, search);
          // A plan item that never ran (a graph's copy the capture does not
          // show) holds the cursor; the records go on after the last one
          // taken (hold-out set 19's bcg: one of its first graph's three
          // copies ran, and its 32 trips were lost after the second).
          if (found == SIZE_MAX && after_last_taken > cursor) found = search_from(after_last_taken);
          if (found != SIZE_MAX) {
            take(found);
            open_condition = plan.launches[found].condition_of.empty() ? -1 : static_cast<int64_t>(found);
            if (found > cursor + options.lookahead) cursor = found;
            last_gemm_instruction = c.token == Token::kGemm ? static_cast<int64_t>(found) : -1;
            open_dnn_call = c.token == Token::kDnn ? static_cast<int64_t>(found) : -1;
            open_call_ran_kernel = true;
          } else if (c.token == Token::kGemm && last_gemm_instruction >= 0) {
            found = static_cast<size_t>(last_gemm_instruction);
          } else {
            continue;
          }
        }
        e.instruction = instruction[found];
        if (e.instruction != 0) {
          ++summary.events_linked;
          summary.work_ns_linked += e.duration_ns();
        }
        if (c.token == Token::kGemm || trace::classify_kernel(t.name_of(e)) == EventKind::kGemm) {
          e.kind = EventKind::kGemm;
        }
      }
      summary.steps.push_back({device, step, start_ns, end_ns});
    }
  }
  for (const Event& e : t.events) {
    if (e.iteration < 0) ++summary.events_outside_steps;
  }
  t.add_counter("link_steps", static_cast<int64_t>(summary.steps.size()), "executions of the linked module found");
  t.add_counter("link_events_in_steps", summary.events_in_steps, "captured records inside the module's steps");
  t.add_counter("link_events_linked", summary.events_linked, "records inside steps tied to an HLO instruction");
  t.add_counter("link_events_unlinked", summary.events_in_steps - summary.events_linked,
                "records inside steps with no instruction (host transfers, kernels the dump does not list)");
  t.add_counter("link_events_outside_steps", summary.events_outside_steps,
                "records outside every step: autotuning, other modules, setup copies");
  t.add_counter("link_autotuning_kernels", summary.autotuning_kernels,
                "kernels of XLA's autotuner and buffer checks (outside steps)");
  if (plan.loops_with_unknown_trip_count > 0) {
    t.add_counter("link_loops_unknown_trip_count", plan.loops_with_unknown_trip_count,
                  "while loops without known_trip_count: one planned trip, followed as often as it ran");
  }
  return summary;
}

}  // namespace sl::xla
