#include "core/trace/analysis.h"

#include "core/trace/compact_trace.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

namespace sl::trace {
namespace {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;

// Sorted, disjoint, non-empty intervals covering the same time as `in`.
Intervals merge(Intervals in) {
  std::sort(in.begin(), in.end());
  Intervals out;
  for (const auto& [s, e] : in) {
    if (e <= s) continue;
    if (!out.empty() && s <= out.back().second) {
      out.back().second = std::max(out.back().second, e);
    } else {
      out.emplace_back(s, e);
    }
  }
  return out;
}

int64_t total(const Intervals& merged) {
  int64_t sum = 0;
  for (const auto& [s, e] : merged) sum = saturating_add(sum, saturating_sub(e, s));
  return sum;
}

// Length of the intersection of two merged interval lists.
int64_t intersection(const Intervals& a, const Intervals& b) {
  int64_t sum = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].first, b[j].first);
    int64_t hi = std::min(a[i].second, b[j].second);
    if (hi > lo) sum = saturating_add(sum, saturating_sub(hi, lo));
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return sum;
}

}  // namespace

int64_t union_length(std::vector<std::pair<int64_t, int64_t>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  int64_t sum = 0;
  int64_t cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& [s, e] : intervals) {
    if (e <= s) continue;
    if (open && s <= cur_e) {
      cur_e = std::max(cur_e, e);
    } else {
      if (open) sum = saturating_add(sum, saturating_sub(cur_e, cur_s));
      cur_s = s;
      cur_e = e;
      open = true;
    }
  }
  if (open) sum = saturating_add(sum, saturating_sub(cur_e, cur_s));
  return sum;
}

std::vector<StreamBusy> stream_busy_time(const Trace& trace) {
  std::map<std::pair<int32_t, int32_t>, std::pair<Intervals, StreamBusy>> tracks;
  for (const Event& e : trace.events) {
    auto& [intervals, busy] = tracks[{e.device, e.stream}];
    if (busy.event_count == 0) {
      busy.device = e.device;
      busy.stream = e.stream;
      busy.stream_kind = e.stream_kind;
    }
    ++busy.event_count;
    intervals.emplace_back(e.start_ns, e.end_ns);
  }
  std::vector<StreamBusy> out;
  out.reserve(tracks.size());
  for (auto& [key, value] : tracks) {
    value.second.busy_ns = union_length(value.first);
    out.push_back(value.second);
  }
  return out;
}

std::vector<DeviceIdle> device_idle_time(const Trace& trace) {
  std::map<int32_t, Intervals> per_device;
  for (const Event& e : trace.events) per_device[e.device].emplace_back(e.start_ns, e.end_ns);
  std::vector<DeviceIdle> out;
  out.reserve(per_device.size());
  for (auto& [device, intervals] : per_device) {
    DeviceIdle d;
    d.device = device;
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    for (const auto& [start, end] : intervals) {
      if (end <= start) continue;
      first = std::min(first, start);
      last = std::max(last, end);
    }
    d.busy_ns = union_length(intervals);
    d.span_ns = d.busy_ns > 0 ? saturating_sub(last, first) : 0;
    out.push_back(d);
  }
  return out;
}

bool is_compute_event(const Event& e) {
  if (e.stream_kind != StreamKind::kCompute) return false;
  switch (e.kind) {
    case EventKind::kGemm: case EventKind::kElementwise: case EventKind::kCopy: case EventKind::kOther:
      return true;
    default:
      return false;
  }
}

bool is_communication_event(const Event& e) { return e.kind == EventKind::kCollective; }

OverlapReport compute_communication_overlap(const Trace& trace) {
  std::map<int32_t, std::pair<Intervals, Intervals>> per_device;  // compute, communication
  for (const Event& e : trace.events) {
    bool compute = is_compute_event(e);
    bool comm = is_communication_event(e);
    if (!compute && !comm) continue;
    auto& [c, m] = per_device[e.device];
    (compute ? c : m).emplace_back(e.start_ns, e.end_ns);
  }
  OverlapReport report;
  for (auto& [device, lists] : per_device) {
    Intervals compute = merge(std::move(lists.first));
    Intervals comm = merge(std::move(lists.second));
    DeviceOverlap d;
    d.device = device;
    d.compute_ns = total(compute);
    d.communication_ns = total(comm);
    d.overlap_ns = intersection(compute, comm);
    d.ratio = d.communication_ns > 0 ? static_cast<double>(d.overlap_ns) / static_cast<double>(d.communication_ns)
                                     : 0.0;
    report.compute_ns = saturating_add(report.compute_ns, d.compute_ns);
    report.communication_ns = saturating_add(report.communication_ns, d.communication_ns);
    report.overlap_ns = saturating_add(report.overlap_ns, d.overlap_ns);
    report.devices.push_back(d);
  }
  if (report.communication_ns > 0) {
    report.ratio = static_cast<double>(report.overlap_ns) / static_cast<double>(report.communication_ns);
  }
  return report;
}

CriticalPath critical_path(const Trace& trace) {
  const auto& ev = trace.events;
  if (ev.empty()) return {};
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

  // Previous event on the same (device, stream), in start order.
  std::vector<uint32_t> order(ev.size());
  for (uint32_t i = 0; i < ev.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(ev[a].device, ev[a].stream, ev[a].start_ns, ev[a].end_ns, a) <
           std::tie(ev[b].device, ev[b].stream, ev[b].start_ns, ev[b].end_ns, b);
  });
  std::vector<uint32_t> stream_prev(ev.size(), kNone);
  for (size_t k = 1; k < order.size(); ++k) {
    const Event& a = ev[order[k - 1]];
    const Event& b = ev[order[k]];
    if (a.device == b.device && a.stream == b.stream) stream_prev[order[k]] = order[k - 1];
  }
  std::vector<std::vector<uint32_t>> incoming(ev.size());
  for (const Dependency& d : trace.dependencies) {
    if (d.from < ev.size() && d.to < ev.size() && d.from != d.to) incoming[d.to].push_back(d.from);
  }

  return walk_critical_path(ev, [&](uint32_t cur, const std::function<void(uint32_t)>& consider) {
    for (uint32_t p : incoming[cur]) consider(p);
    if (stream_prev[cur] != kNone) consider(stream_prev[cur]);
  });
}

namespace {

template <typename AnyTrace>
std::vector<KernelStats> kernel_statistics_of(const AnyTrace& trace) {
  struct Acc {
    KernelStats stats;
    double m2 = 0.0;  // Welford: sum of squared deviations from the running mean
  };
  std::unordered_map<uint32_t, Acc> by_name;
  for (const auto& e : trace.events) {
    auto [it, inserted] = by_name.try_emplace(e.name);
    KernelStats& s = it->second.stats;
    int64_t d = e.duration_ns();
    if (inserted) {
      s.name = trace.name_of(e);
      s.kind = e.kind;
      s.min_ns = d;
      s.max_ns = d;
    }
    ++s.count;
    s.total_ns = saturating_add(s.total_ns, d);
    s.min_ns = std::min(s.min_ns, d);
    s.max_ns = std::max(s.max_ns, d);
    double delta = static_cast<double>(d) - s.mean_ns;
    s.mean_ns += delta / static_cast<double>(s.count);
    it->second.m2 += delta * (static_cast<double>(d) - s.mean_ns);
  }
  std::vector<KernelStats> out;
  out.reserve(by_name.size());
  for (auto& [id, acc] : by_name) {
    KernelStats s = acc.stats;
    s.mean_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    s.stddev_ns = acc.m2 > 0 ? std::sqrt(acc.m2 / static_cast<double>(s.count)) : 0.0;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const KernelStats& a, const KernelStats& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return out;
}

}  // namespace

std::vector<KernelStats> kernel_statistics(const Trace& trace) { return kernel_statistics_of(trace); }
std::vector<KernelStats> kernel_statistics(const CompactTrace& trace) { return kernel_statistics_of(trace); }

}  // namespace sl::trace
