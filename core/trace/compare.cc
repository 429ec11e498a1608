#include "core/trace/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/trace/iterations.h"
#include "core/trace/report.h"

namespace sl::trace {
namespace {

using Json = nlohmann::ordered_json;

struct Key {
  int32_t device;
  std::string instruction;
  int32_t occurrence;
  bool operator<(const Key& o) const {
    return std::tie(device, instruction, occurrence) < std::tie(o.device, o.instruction, o.occurrence);
  }
};

int64_t origin_of(const Trace& trace) {
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const Event& e : trace.events) first = std::min(first, e.start_ns);
  return trace.events.empty() ? 0 : first;
}

// Something compare matches: an event, or a launch of several kernels.
struct Keyed {
  int64_t start_ns = 0, end_ns = 0;
  int32_t stream = 0;
  int32_t device = 0;
  std::string key;     // instruction, or the event's name when it has none
  uint32_t event = 0;  // what the key maps to
};

std::string key_of(const Trace& trace, const Event& e) {
  return e.instruction != 0 ? trace.instruction_of(e) : trace.name_of(e);
}

// Key -> event, occurrences numbered per (device, key) in (start, end,
// stream, position) order.
std::map<Key, uint32_t> number_occurrences(std::vector<Keyed> items) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return std::tie(items[x].start_ns, items[x].end_ns, items[x].stream, x) <
           std::tie(items[y].start_ns, items[y].end_ns, items[y].stream, y);
  });
  std::map<std::pair<int32_t, std::string>, int32_t> seen;
  std::map<Key, uint32_t> out;
  for (size_t i : order) {
    Keyed& item = items[i];
    int32_t occurrence = seen[{item.device, item.key}]++;
    out.emplace(Key{item.device, std::move(item.key), occurrence}, item.event);
  }
  return out;
}

std::map<Key, uint32_t> keyed_events(const Trace& trace) {
  std::vector<Keyed> items;
  items.reserve(trace.events.size());
  for (uint32_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    items.push_back({e.start_ns, e.end_ns, e.stream, e.device, key_of(trace, e), i});
  }
  return number_occurrences(std::move(items));
}

RunSummary summarize(const RunInfo& info, const Trace& trace, const Trace& full) {
  RunSummary s;
  s.info = info;
  s.iterations = static_cast<int32_t>(iterations_of(full).size());
  if (s.iterations > 1) s.iteration = median_iteration(full);
  if (s.iterations >= kMinStepsForSpread) {
    const std::vector<IterationLength> lengths = iteration_lengths(full);
    const size_t last = lengths.size() - 1;
    s.middle_half_low_ns = lengths[last / 4].length_ns;
    s.middle_half_high_ns = lengths[(3 * last) / 4].length_ns;
  }
  s.makespan_ns = trace.events.empty() ? info.makespan_ns : trace.makespan_ns();
  s.streams = stream_busy_time(trace);
  s.idle = device_idle_time(trace);
  s.host = host_probe_of(full);
  s.overlap = compute_communication_overlap(trace);
  s.critical_path = critical_path(trace);
  for (uint32_t i : s.critical_path.events) {
    const Event& e = trace.events[i];
    s.critical_path_names.push_back(e.instruction != 0
                                        ? fmt::format("{} ({})", trace.instruction_of(e), trace.name_of(e))
                                        : trace.name_of(e));
  }
  return s;
}

Json summary_json(const RunSummary& s) {
  Json j;
  j["run"] = s.info.id;
  j["name"] = s.info.name;
  j["backend"] = s.info.backend;
  j["device_model"] = s.info.device_model;
  j["makespan_ns"] = s.makespan_ns;
  j["iterations"] = s.iterations;
  if (s.iteration >= 0) j["compared_iteration"] = s.iteration;
  if (s.middle_half_high_ns > 0) j["middle_half_ns"] = {s.middle_half_low_ns, s.middle_half_high_ns};
  Json streams = Json::array();
  for (const StreamBusy& b : s.streams) {
    streams.push_back({{"device", b.device}, {"stream", b.stream},
                       {"stream_kind", sched::stream_kind_name(b.stream_kind)}, {"busy_ns", b.busy_ns},
                       {"events", b.event_count}});
  }
  j["streams"] = std::move(streams);
  Json idle = Json::array();
  for (const DeviceIdle& d : s.idle) {
    idle.push_back({{"device", d.device}, {"span_ns", d.span_ns}, {"busy_ns", d.busy_ns}, {"idle_ns", d.idle_ns()}});
  }
  j["idle"] = std::move(idle);
  if (s.host.measured()) j["host_probe_ns"] = {{"start", s.host.start_ns}, {"end", s.host.end_ns}};
  Json devices = Json::array();
  for (const DeviceOverlap& d : s.overlap.devices) {
    devices.push_back({{"device", d.device}, {"compute_ns", d.compute_ns}, {"communication_ns", d.communication_ns},
                       {"overlap_ns", d.overlap_ns}, {"ratio", d.ratio}});
  }
  j["overlap"] = {{"compute_ns", s.overlap.compute_ns}, {"communication_ns", s.overlap.communication_ns},
                  {"overlap_ns", s.overlap.overlap_ns}, {"ratio", s.overlap.ratio}, {"devices", devices}};
  j["critical_path"] = {{"length_ns", s.critical_path.length_ns()}, {"busy_ns", s.critical_path.busy_ns},
                        {"events", s.critical_path_names}};
  return j;
}

}  // namespace

Comparison compare_runs(const RunInfo& info_a, const Trace& full_a, const RunInfo& info_b, const Trace& full_b) {
  // One iteration of each, one event per instruction launch: a measured run
  // then lines up with a simulated one of the same program.
  const Trace a = instruction_spans(representative_iteration(full_a));
  const Trace b = instruction_spans(representative_iteration(full_b));
  Comparison c;
  c.a = summarize(info_a, a, full_a);
  c.b = summarize(info_b, b, full_b);
  int64_t origin_a = origin_of(a);
  int64_t origin_b = origin_of(b);
  std::map<Key, uint32_t> ka = keyed_events(a);
  std::map<Key, uint32_t> kb = keyed_events(b);

  auto fill = [](InstructionDelta& d, const Trace& t, uint32_t i, int64_t origin, bool is_a) {
    const Event& e = t.events[i];
    if (d.name.empty()) d.name = t.name_of(e);
    (is_a ? d.in_a : d.in_b) = true;
    (is_a ? d.start_a_ns : d.start_b_ns) = saturating_sub(e.start_ns, origin);
    (is_a ? d.duration_a_ns : d.duration_b_ns) = e.duration_ns();
    (is_a ? d.stream_a : d.stream_b) = e.stream;
  };
  for (const auto& [key, ia] : ka) {
    InstructionDelta d;
    d.device = key.device;
    d.instruction = key.instruction;
    d.occurrence = key.occurrence;
    fill(d, a, ia, origin_a, true);
    auto it = kb.find(key);
    if (it != kb.end()) fill(d, b, it->second, origin_b, false);
    c.deltas.push_back(std::move(d));
  }
  for (const auto& [key, ib] : kb) {
    if (ka.count(key)) continue;
    InstructionDelta d;
    d.device = key.device;
    d.instruction = key.instruction;
    d.occurrence = key.occurrence;
    fill(d, b, ib, origin_b, false);
    c.deltas.push_back(std::move(d));
  }
  for (const InstructionDelta& d : c.deltas) {
    if (d.matched()) ++c.matched;
    else if (d.in_a) ++c.only_in_a;
    else ++c.only_in_b;
  }
  std::stable_sort(c.deltas.begin(), c.deltas.end(), [](const InstructionDelta& x, const InstructionDelta& y) {
    if (x.matched() != y.matched()) return x.matched();
    int64_t dx = std::llabs(x.duration_delta_ns()), dy = std::llabs(y.duration_delta_ns());
    if (dx != dy) return dx > dy;
    int64_t sx = std::llabs(x.start_delta_ns()), sy = std::llabs(y.start_delta_ns());
    if (sx != sy) return sx > sy;
    return std::tie(x.device, x.instruction, x.occurrence) < std::tie(y.device, y.instruction, y.occurrence);
  });
  return c;
}

std::vector<int64_t> delta_events(const Comparison& c, bool side_a, const Trace& full) {
  const RunSummary& summary = side_a ? c.a : c.b;
  const bool one_iteration_only = summary.iterations > 1;
  // The compared trace's launches (instruction_spans of the compared
  // iteration), each standing for its first event in `full`.
  std::vector<Keyed> launches;
  std::map<std::tuple<int32_t, std::string, int64_t>, size_t> by_correlation;
  for (uint32_t i = 0; i < full.events.size(); ++i) {
    const Event& e = full.events[i];
    if (one_iteration_only && e.iteration != summary.iteration) continue;
    std::string key = key_of(full, e);
    if (e.instruction != 0 && e.correlation != 0) {
      auto [it, inserted] = by_correlation.try_emplace({e.device, key, e.correlation}, launches.size());
      if (!inserted) {
        Keyed& launch = launches[it->second];
        if (e.start_ns < launch.start_ns) {
          launch.start_ns = e.start_ns;
          launch.stream = e.stream;
          launch.event = i;
        }
        launch.end_ns = std::max(launch.end_ns, e.end_ns);
        continue;
      }
    }
    launches.push_back({e.start_ns, e.end_ns, e.stream, e.device, std::move(key), i});
  }
  const std::map<Key, uint32_t> first_event = number_occurrences(std::move(launches));
  std::vector<int64_t> out;
  out.reserve(c.deltas.size());
  for (const InstructionDelta& d : c.deltas) {
    auto it = (side_a ? d.in_a : d.in_b) ? first_event.find(Key{d.device, d.instruction, d.occurrence})
                                         : first_event.end();
    out.push_back(it == first_event.end() ? -1 : static_cast<int64_t>(it->second));
  }
  return out;
}

namespace {

// The makespan moved by at least this share of A's before `compare` says
// which of busy and idle time it moved with.
constexpr int64_t kIdleNoteMinPercent = 2;

// Each device's idle time beside the stream table, and which of busy and
// idle time the makespan moved with: a captured step that got slower with
// the same kernels got slower on the host (another process's pace, say).
std::string format_idle(const Comparison& c) {
  std::map<int32_t, std::pair<const DeviceIdle*, const DeviceIdle*>> devices;
  for (const DeviceIdle& d : c.a.idle) devices[d.device].first = &d;
  for (const DeviceIdle& d : c.b.idle) devices[d.device].second = &d;
  std::string out = "\nGPU idle (us): no record running on the device between its first start and last end\n";
  out += fmt::format("{:>6}  {:>12} {:>12} {:>12}  {:>12}\n", "DEVICE", "A", "B", "B-A", "BUSY B-A");
  int64_t idle_delta = 0, busy_delta = 0;
  for (const auto& [device, ab] : devices) {
    const int64_t idle_a = ab.first ? ab.first->idle_ns() : 0, idle_b = ab.second ? ab.second->idle_ns() : 0;
    const int64_t busy_a = ab.first ? ab.first->busy_ns : 0, busy_b = ab.second ? ab.second->busy_ns : 0;
    idle_delta += idle_b - idle_a;
    busy_delta += busy_b - busy_a;
    out += fmt::format("{:>6}  {:>12} {:>12} {:>12}  {:>12}\n", device, format_us(idle_a), format_us(idle_b),
                       format_us(idle_b - idle_a), format_us(busy_b - busy_a));
  }
  const int64_t makespan_delta = c.makespan_delta_ns();
  const bool moved = c.a.makespan_ns > 0 && std::llabs(makespan_delta) * 100 >= c.a.makespan_ns * kIdleNoteMinPercent;
  if (devices.size() == 1 && moved && std::llabs(idle_delta) > 2 * std::llabs(busy_delta) &&
      (idle_delta > 0) == (makespan_delta > 0)) {
    out += "note: the makespan moved with the GPU's idle time, not its busy time: the host's pace (launches, "
           "syncs, the framework's dispatch), not the kernels\n";
  }
  return out;
}

// Two hosts whose probes differ by this factor ran at different paces (a
// core that runs at half speed for a while doubles it; run to run on one
// pace it moves by a few percent).
constexpr double kHostProbeNoteRatio = 1.3;

// The captures' own measure of their host cores (host_probe.h), and a note
// when A's and B's differ: a launch-bound step follows its core's pace.
std::string format_host_probe(const Comparison& c) {
  if (!c.a.host.measured() && !c.b.host.measured()) return {};
  auto us = [](int64_t ns) { return ns > 0 ? format_us(ns) : std::string("-"); };
  std::string out = "\nhost probe (us): a fixed CPU workload in the captured process, at its start and end; "
                    "longer is a slower host core\n";
  out += fmt::format("{:>6}  {:>12} {:>12}\n", "RUN", "START", "END");
  out += fmt::format("{:>6}  {:>12} {:>12}\n", "A", us(c.a.host.start_ns), us(c.a.host.end_ns));
  out += fmt::format("{:>6}  {:>12} {:>12}\n", "B", us(c.b.host.start_ns), us(c.b.host.end_ns));
  auto ratio = [](int64_t a, int64_t b) { return a > 0 && b > 0 ? static_cast<double>(b) / a : 1.0; };
  const double at_start = ratio(c.a.host.start_ns, c.b.host.start_ns);
  const double at_end = ratio(c.a.host.end_ns, c.b.host.end_ns);
  auto apart = [](double r) { return r >= kHostProbeNoteRatio || r <= 1.0 / kHostProbeNoteRatio; };
  if (apart(at_start) || apart(at_end)) {
    out += fmt::format(
        "note: the two hosts ran at different paces (B's probe x{:.2f} of A's at the start, x{:.2f} at the end): "
        "a host-bound step's time moves with its core, whatever the program\n",
        at_start, at_end);
  }
  return out;
}

// A note when the makespans differ by no more than the width of a run's
// middle half of steps (A's, else B's): a difference that small lies
// within that run's own step-to-step noise.
std::string format_within_spread(const Comparison& c) {
  const RunSummary* measured = c.a.middle_half_high_ns > 0 ? &c.a : c.b.middle_half_high_ns > 0 ? &c.b : nullptr;
  if (measured == nullptr || std::llabs(c.makespan_delta_ns()) > measured->middle_half_width_ns()) return {};
  return fmt::format(
      "note: that is within {}'s own spread from step to step (the middle half of its steps spans {} us)\n",
      measured == &c.a ? "A" : "B", format_us(measured->middle_half_width_ns()));
}

}  // namespace

std::string format_comparison_text(const Comparison& c, size_t max_rows) {
  auto pct = [](int64_t base, int64_t delta) {
    return base != 0 ? fmt::format("{:+.1f}%", 100.0 * static_cast<double>(delta) / static_cast<double>(base))
                     : std::string("n/a");
  };
  auto which_iteration = [](const RunSummary& s) {
    if (s.iteration < 0) return std::string();
    const std::string spread = s.middle_half_high_ns > 0
                                   ? fmt::format("; the middle half of the steps {}-{} us",
                                                 format_us(s.middle_half_low_ns), format_us(s.middle_half_high_ns))
                                   : std::string();
    return fmt::format(" (iteration {}, the median of {}{})", s.iteration, s.iterations, spread);
  };
  std::string out;
  out += fmt::format("A: run {} {} ({} {}), makespan {} us{}\n", c.a.info.id, c.a.info.name, c.a.info.backend,
                     c.a.info.device_model, format_us(c.a.makespan_ns), which_iteration(c.a));
  out += fmt::format("B: run {} {} ({} {}), makespan {} us{}\n", c.b.info.id, c.b.info.name, c.b.info.backend,
                     c.b.info.device_model, format_us(c.b.makespan_ns), which_iteration(c.b));
  out += fmt::format("makespan delta (B - A): {} us ({})\n", format_us(c.makespan_delta_ns()),
                     pct(c.a.makespan_ns, c.makespan_delta_ns()));
  out += format_within_spread(c);
  out += fmt::format("events matched {}, only in A {}, only in B {}\n", c.matched, c.only_in_a, c.only_in_b);

  out += "\nper-instruction deltas (B - A), largest first\n";
  out += fmt::format("{:>6}  {:<28} {:>4}  {:>12} {:>12} {:>12}  {:>12} {:>12} {:>12}\n", "DEVICE", "INSTRUCTION",
                     "OCC", "DUR_A(us)", "DUR_B(us)", "dDUR(us)", "START_A(us)", "START_B(us)", "dSTART(us)");
  size_t rows = max_rows == 0 ? c.deltas.size() : std::min(max_rows, c.deltas.size());
  for (size_t i = 0; i < rows; ++i) {
    const InstructionDelta& d = c.deltas[i];
    auto or_dash = [](bool present, int64_t ns) { return present ? format_us(ns) : std::string("-"); };
    out += fmt::format("{:>6}  {:<28} {:>4}  {:>12} {:>12} {:>12}  {:>12} {:>12} {:>12}\n", d.device,
                       d.instruction, d.occurrence, or_dash(d.in_a, d.duration_a_ns), or_dash(d.in_b, d.duration_b_ns),
                       d.matched() ? format_us(d.duration_delta_ns()) : (d.in_a ? "only A" : "only B"),
                       or_dash(d.in_a, d.start_a_ns), or_dash(d.in_b, d.start_b_ns),
                       d.matched() ? format_us(d.start_delta_ns()) : std::string("-"));
  }
  if (rows < c.deltas.size()) out += fmt::format("... {} more\n", c.deltas.size() - rows);

  out += "\nstream busy time (us)\n";
  std::map<std::pair<int32_t, int32_t>, std::pair<int64_t, int64_t>> busy;
  for (const StreamBusy& s : c.a.streams) busy[{s.device, s.stream}].first = s.busy_ns;
  for (const StreamBusy& s : c.b.streams) busy[{s.device, s.stream}].second = s.busy_ns;
  out += fmt::format("{:>6} {:>6}  {:>12} {:>12} {:>12}\n", "DEVICE", "STREAM", "A", "B", "B-A");
  for (const auto& [key, v] : busy) {
    out += fmt::format("{:>6} {:>6}  {:>12} {:>12} {:>12}\n", key.first, key.second, format_us(v.first),
                       format_us(v.second), format_us(saturating_sub(v.second, v.first)));
  }

  out += format_idle(c);
  out += format_host_probe(c);

  out += "\ncompute/communication overlap\n";
  out += fmt::format("A: {:.1f}% ({} of {} us communicating)\n", 100.0 * c.a.overlap.ratio,
                     format_us(c.a.overlap.overlap_ns), format_us(c.a.overlap.communication_ns));
  out += fmt::format("B: {:.1f}% ({} of {} us communicating)\n", 100.0 * c.b.overlap.ratio,
                     format_us(c.b.overlap.overlap_ns), format_us(c.b.overlap.communication_ns));

  for (const RunSummary* s : {&c.a, &c.b}) {
    out += fmt::format("\ncritical path {}: {} events, {} us busy of {} us\n", s == &c.a ? "A" : "B",
                       s->critical_path.events.size(), format_us(s->critical_path.busy_ns),
                       format_us(s->critical_path.length_ns()));
    // A long path (a loop's trips) keeps its ends within the row limit; the
    // JSON has every event.
    const std::vector<std::string>& names = s->critical_path_names;
    const size_t half = std::max<size_t>(1, max_rows / 2);
    const bool cut = max_rows != 0 && names.size() > 2 * half;
    std::string chain;
    for (size_t i = 0; i < names.size(); ++i) {
      if (cut && i == half) {
        chain += fmt::format(" -> ... {} more", names.size() - 2 * half);
        i = names.size() - half - 1;
        continue;
      }
      chain += (i ? " -> " : "  ") + names[i];
    }
    out += chain + "\n";
  }
  return out;
}

std::string comparison_json(const Comparison& c, int indent) {
  Json j;
  j["a"] = summary_json(c.a);
  j["b"] = summary_json(c.b);
  j["makespan_a_ns"] = c.a.makespan_ns;
  j["makespan_b_ns"] = c.b.makespan_ns;
  j["makespan_delta_ns"] = c.makespan_delta_ns();
  j["matched"] = c.matched;
  j["only_in_a"] = c.only_in_a;
  j["only_in_b"] = c.only_in_b;
  Json deltas = Json::array();
  for (const InstructionDelta& d : c.deltas) {
    Json row;
    row["device"] = d.device;
    row["instruction"] = d.instruction;
    row["occurrence"] = d.occurrence;
    row["name"] = d.name;
    row["in_a"] = d.in_a;
    row["in_b"] = d.in_b;
    if (d.in_a) {
      row["stream_a"] = d.stream_a;
      row["start_a_ns"] = d.start_a_ns;
      row["duration_a_ns"] = d.duration_a_ns;
    }
    if (d.in_b) {
      row["stream_b"] = d.stream_b;
      row["start_b_ns"] = d.start_b_ns;
      row["duration_b_ns"] = d.duration_b_ns;
    }
    if (d.matched()) {
      row["duration_delta_ns"] = d.duration_delta_ns();
      row["start_delta_ns"] = d.start_delta_ns();
    }
    deltas.push_back(std::move(row));
  }
  j["deltas"] = std::move(deltas);
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sl::trace
