#include "sim/calibrate_samples.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "sim/cost_model.h"

namespace sl::sim::calibrate_internal {
namespace {

using sched::Thunk;
using sched::ThunkKind;
using trace::EventKind;

struct Interval {
  int64_t start, end;
};

// Union of intervals, sorted and merged.
std::vector<Interval> merge(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

double overlap(const std::vector<Interval>& merged, int64_t start, int64_t end) {
  auto it = std::lower_bound(merged.begin(), merged.end(), start,
                             [](const Interval& i, int64_t s) { return i.end <= s; });
  double total = 0;
  for (; it != merged.end() && it->start < end; ++it) {
    total += static_cast<double>(std::min(end, it->end) - std::max(start, it->start));
  }
  return total;
}

bool is_compute_kernel(EventKind kind) {
  return kind != EventKind::kCollective && kind != EventKind::kWait && kind != EventKind::kMemset;
}

ThunkKind thunk_kind_for(EventKind kind) {
  if (kind == EventKind::kGemm) return ThunkKind::kGemm;
  if (kind == EventKind::kCollective) return ThunkKind::kCollective;
  return ThunkKind::kKernel;
}

}  // namespace

void collect_samples(const CalibrationRun& run, std::vector<Sample>* out, std::vector<std::string>* notes) {
  const trace::Trace& tr = *run.trace;
  using Key = std::tuple<int64_t, std::string, ThunkKind>;
  std::map<Key, std::vector<const Thunk*>> thunks;
  for (const sched::DeviceProgram& dp : run.program->devices) {
    for (const Thunk& t : dp.thunks) {
      if (t.kind == ThunkKind::kRecordEvent || t.kind == ThunkKind::kWaitEvent) continue;
      std::string name(!t.attributed_name.empty() ? t.attributed_name
                                                  : t.instruction ? std::string_view(t.instruction->name) : "");
      thunks[Key{dp.device, name, t.kind}].push_back(&t);
    }
  }
  // GEMMs the run confined to fewer SMs (beside a collective, comm_sms > 0).
  std::set<std::pair<int64_t, std::string>> confined;  // (device, instruction)
  if (run.comm_sms > 0) {
    for (const sched::DeviceProgram& dp : run.program->devices) {
      for (const Thunk& t : dp.thunks) {
        if (t.kind == ThunkKind::kGemm && t.gemm.beside_collective) {
          confined.emplace(dp.device, !t.attributed_name.empty() ? t.attributed_name
                                      : t.instruction ? t.instruction->name : "");
        }
      }
    }
  }
  // Per device: collective union, per-stream unions of compute kernels, and
  // the union of confined GEMMs.
  std::map<int32_t, std::vector<Interval>> collectives, confined_gemms;
  std::map<int32_t, std::map<int32_t, std::vector<Interval>>> kernels;
  std::vector<size_t> order;
  for (size_t i = 0; i < tr.events.size(); ++i) {
    const trace::Event& e = tr.events[i];
    if (e.end_ns <= e.start_ns) continue;
    if (e.kind == EventKind::kCollective) collectives[e.device].push_back({e.start_ns, e.end_ns});
    if (is_compute_kernel(e.kind)) kernels[e.device][e.stream].push_back({e.start_ns, e.end_ns});
    if (e.kind == EventKind::kGemm && confined.count({e.device, std::string(tr.instruction_of(e))})) {
      confined_gemms[e.device].push_back({e.start_ns, e.end_ns});
    }
    order.push_back(i);
  }
  for (auto& [d, v] : collectives) v = merge(std::move(v));
  for (auto& [d, v] : confined_gemms) v = merge(std::move(v));
  for (auto& [d, streams] : kernels) {
    for (auto& [s, v] : streams) v = merge(std::move(v));
  }
  // Events per (device, instruction, kind) in time order.
  std::map<Key, std::vector<size_t>> by_key;
  int64_t unmatched = 0;
  for (size_t i : order) {
    const trace::Event& e = tr.events[i];
    if (e.kind == EventKind::kWait || e.kind == EventKind::kMemset) continue;
    Key key{e.device, tr.instruction_of(e), thunk_kind_for(e.kind)};
    if (thunks.count(key) == 0) {
      ++unmatched;
      continue;
    }
    by_key[key].push_back(i);
  }
  for (auto& [key, events] : by_key) {
    std::stable_sort(events.begin(), events.end(), [&](size_t a, size_t b) {
      return tr.events[a].start_ns < tr.events[b].start_ns;
    });
    const std::vector<const Thunk*>& matching = thunks.at(key);
    std::vector<KernelWork> work;  // the same instruction's thunks do the same work
    for (const Thunk* t : matching) work.push_back(kernel_work(run.program->module, *t));
    // One launch can run several kernels (cuBLAS split-K and its reduction):
    // when every launch of this instruction shows the same number of kernels,
    // each group of them is one sample spanning the group.
    std::vector<int32_t> iterations;
    for (size_t i : events) iterations.push_back(tr.events[i].iteration);
    std::sort(iterations.begin(), iterations.end());
    size_t launches = matching.size() * static_cast<size_t>(std::unique(iterations.begin(), iterations.end()) -
                                                            iterations.begin());
    size_t per_launch = launches > 0 && events.size() % launches == 0 ? events.size() / launches : 1;
    for (size_t g = 0; g * per_launch < events.size(); ++g) {
      const trace::Event& e = tr.events[events[g * per_launch]];
      int64_t start = e.start_ns, end = e.end_ns;
      for (size_t j = 1; j < per_launch; ++j) end = std::max(end, tr.events[events[g * per_launch + j]].end_ns);
      Sample s;
      s.thunk = matching[g % matching.size()];  // repeated iterations run the same thunks again
      s.work = work[g % matching.size()];
      s.run = &run;
      s.duration_ns = static_cast<double>(end - start);
      s.device = e.device;
      s.stream = e.stream;
      s.start_ns = start;
      s.end_ns = end;
      if (auto c = collectives.find(e.device); c != collectives.end() && e.kind != EventKind::kCollective) {
        s.collective_overlap_ns = overlap(c->second, start, end);
        s.started_inside_collective =
            overlap(c->second, start - 1, start) > 0 && overlap(c->second, start, start + 1) > 0;
      }
      if (auto k = kernels.find(e.device); k != kernels.end()) {
        for (const auto& [stream, merged] : k->second) {
          // Closed at both ends: a kernel that waited for this one's SMs
          // starts the very nanosecond it ends (in the simulator; on a GPU
          // its first CTAs start a little before).
          if (stream != e.stream) s.kernel_overlap_ns += overlap(merged, start - 1, end + 1);
        }
      }
      if (auto g = confined_gemms.find(e.device); g != confined_gemms.end() && e.kind == EventKind::kCollective) {
        s.confined_overlap_ns = overlap(g->second, start, end);
      }
      out->push_back(s);
    }
  }
  if (unmatched > 0) {
    notes->push_back(fmt::format("run {}: {} events name no instruction of the program and were skipped", run.run_id,
                                 unmatched));
  }
}

}  // namespace sl::sim::calibrate_internal
