#include "core/trace/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/trace/analysis.h"
#include "core/trace/iterations.h"

namespace sl::trace {
namespace {

int64_t origin_of(const Trace& trace) {
  if (trace.events.empty()) return 0;
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const Event& e : trace.events) first = std::min(first, e.start_ns);
  return first;
}

// Left-aligned table with column widths fitted to the content.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Columns listed in `right` are right-aligned (numbers).
  std::string render(const std::vector<bool>& right) const {
    std::vector<size_t> width(rows_[0].size(), 0);
    for (const auto& row : rows_) {
      for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line;
      for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
        bool r = c < right.size() && right[c];
        if (c) line += "  ";
        line += r ? fmt::format("{:>{}}", row[c], width[c]) : fmt::format("{:<{}}", row[c], width[c]);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string stream_label(int32_t stream, StreamKind kind) {
  return fmt::format("{} ({})", stream, kind == StreamKind::kCompute ? "compute" : "comm");
}

}  // namespace

std::string format_us(int64_t ns) {
  bool negative = ns < 0;
  uint64_t mag = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", negative ? "-" : "", mag / 1000, mag % 1000);
}

std::string format_runs_table(const std::vector<RunInfo>& runs) {
  if (runs.empty()) return "no runs\n";
  Table table({"ID", "NAME", "PROGRAM", "BACKEND", "DEVICE", "DEVICES", "STATUS", "EVENTS", "MAKESPAN(us)",
               "CREATED"});
  for (const RunInfo& r : runs) {
    table.add({std::to_string(r.id), r.name, r.program_name, r.backend, r.device_model,
               std::to_string(r.num_devices), run_status_name(r.status), std::to_string(r.event_count),
               format_us(r.makespan_ns), r.created_at});
  }
  return table.render({true, false, false, false, false, true, false, true, true, false});
}

std::vector<uint32_t> display_order(const Trace& trace) {
  const auto& ev = trace.events;
  std::vector<uint32_t> order(ev.size());
  for (uint32_t i = 0; i < ev.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(ev[a].start_ns, ev[a].device, ev[a].stream, ev[a].end_ns, a) <
           std::tie(ev[b].start_ns, ev[b].device, ev[b].stream, ev[b].end_ns, b);
  });
  return order;
}

std::string format_show_text(const RunInfo& info, const Trace& trace, size_t max_events) {
  int64_t origin = origin_of(trace);
  int64_t makespan = info.makespan_ns != 0 ? info.makespan_ns : trace.makespan_ns();
  std::string out = fmt::format("run {}{}: {} on {} ({} device{}), {}, {} events, makespan {} us\n", info.id,
                                info.name.empty() ? "" : " '" + info.name + "'",
                                info.program_name.empty() ? "(no program)" : info.program_name, info.backend,
                                info.num_devices, info.num_devices == 1 ? "" : "s", run_status_name(info.status),
                                trace.events.size(), format_us(makespan));
  if (!info.device_model.empty()) out += fmt::format("device model: {}\n", info.device_model);
  if (!info.created_at.empty()) out += fmt::format("created: {}\n", info.created_at);

  out += "\nevents\n";
  Table events({"DEVICE", "STREAM", "KIND", "NAME", "INSTRUCTION", "START(us)", "DUR(us)"});
  std::vector<uint32_t> order = display_order(trace);
  size_t shown = max_events == 0 ? order.size() : std::min(max_events, order.size());
  for (size_t k = 0; k < shown; ++k) {
    const Event& e = trace.events[order[k]];
    events.add({std::to_string(e.device), stream_label(e.stream, e.stream_kind), event_kind_name(e.kind),
                trace.name_of(e), trace.instruction_of(e), format_us(e.start_ns - origin),
                format_us(e.duration_ns())});
  }
  out += events.render({true, false, false, false, false, true, true});
  if (shown < order.size()) out += fmt::format("... {} more events\n", order.size() - shown);

  out += "\nstreams\n";
  Table streams({"DEVICE", "STREAM", "EVENTS", "BUSY(us)", "BUSY%"});
  for (const StreamBusy& s : stream_busy_time(trace)) {
    double pct = makespan > 0 ? 100.0 * static_cast<double>(s.busy_ns) / static_cast<double>(makespan) : 0.0;
    streams.add({std::to_string(s.device), stream_label(s.stream, s.stream_kind), std::to_string(s.event_count),
                 format_us(s.busy_ns), fmt::format("{:.1f}", pct)});
  }
  out += streams.render({true, false, true, true, true});

  OverlapReport overlap = compute_communication_overlap(trace);
  out += "\ncompute/communication overlap (time computing while communicating / time communicating)\n";
  Table ov({"DEVICE", "COMPUTE(us)", "COMM(us)", "OVERLAP(us)", "OVERLAP%"});
  for (const DeviceOverlap& d : overlap.devices) {
    ov.add({std::to_string(d.device), format_us(d.compute_ns), format_us(d.communication_ns),
            format_us(d.overlap_ns), fmt::format("{:.1f}", 100.0 * d.ratio)});
  }
  ov.add({"all", format_us(overlap.compute_ns), format_us(overlap.communication_ns), format_us(overlap.overlap_ns),
          fmt::format("{:.1f}", 100.0 * overlap.ratio)});
  out += ov.render({false, true, true, true, true});

  CriticalPath path = critical_path(trace);
  out += fmt::format("\ncritical path: {} events, {} us busy of {} us\n", path.events.size(), format_us(path.busy_ns),
                     format_us(path.length_ns()));
  Table cp({"DEVICE", "STREAM", "NAME", "INSTRUCTION", "START(us)", "DUR(us)"});
  for (uint32_t i : path.events) {
    const Event& e = trace.events[i];
    cp.add({std::to_string(e.device), stream_label(e.stream, e.stream_kind), trace.name_of(e),
            trace.instruction_of(e), format_us(e.start_ns - origin), format_us(e.duration_ns())});
  }
  out += cp.render({true, false, false, false, true, true});

  out += "\nkernels\n";
  Table ks({"NAME", "KIND", "COUNT", "TOTAL(us)", "MEAN(us)", "MIN(us)", "MAX(us)", "STDDEV(us)"});
  for (const KernelStats& k : kernel_statistics(trace)) {
    ks.add({k.name, event_kind_name(k.kind), std::to_string(k.count), format_us(k.total_ns),
            fmt::format("{:.3f}", k.mean_ns / 1000.0), format_us(k.min_ns), format_us(k.max_ns),
            fmt::format("{:.3f}", k.stddev_ns / 1000.0)});
  }
  out += ks.render({false, false, true, true, true, true, true, true});

  if (!trace.counters.empty()) {
    out += "\ncounters\n";
    Table counters({"NAME", "VALUE", "DESCRIPTION"});
    for (const Counter& c : trace.counters) counters.add({c.name, std::to_string(c.value), c.description});
    out += counters.render({false, true, false});
  }
  return out;
}

std::string run_json(const RunInfo& info, const Trace& trace, int indent) {
  int64_t origin = origin_of(trace);
  nlohmann::ordered_json j;
  j["run"] = info.id;
  j["backend"] = info.backend;
  j["device_model"] = info.device_model;
  j["makespan_ns"] = info.makespan_ns != 0 ? info.makespan_ns : trace.makespan_ns();
  if (size_t iterations = iterations_of(trace).size(); iterations > 1) {
    j["iterations"] = iterations;
    j["median_iteration_makespan_ns"] = one_iteration(trace, median_iteration(trace)).makespan_ns();
  }
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (uint32_t i : display_order(trace)) {
    const Event& e = trace.events[i];
    events.push_back({{"device", e.device},
                      {"stream", e.stream},
                      {"stream_kind", sched::stream_kind_name(e.stream_kind)},
                      {"kind", event_kind_name(e.kind)},
                      {"name", trace.name_of(e)},
                      {"instruction", trace.instruction_of(e)},
                      {"start_ns", saturating_sub(e.start_ns, origin)},
                      {"end_ns", saturating_sub(e.end_ns, origin)}});
  }
  j["events"] = std::move(events);
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sl::trace
