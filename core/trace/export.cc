#include "core/trace/export.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/trace/report.h"

namespace sl::trace {
namespace {

using Json = nlohmann::ordered_json;

int64_t origin_of(const Trace& trace) {
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const Event& e : trace.events) first = std::min(first, e.start_ns);
  return trace.events.empty() ? 0 : first;
}

double to_us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// RFC 4180: quote fields holding a comma, quote or line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

Result<ExportFormat> parse_export_format(std::string_view name) {
  if (name == "chrome") return ExportFormat::kChrome;
  if (name == "csv") return ExportFormat::kCsv;
  return usage_error(fmt::format("unknown export format '{}' (expected chrome or csv)", name));
}

std::string chrome_trace_json(const RunInfo& info, const Trace& trace) {
  int64_t origin = origin_of(trace);
  Json events = Json::array();

  std::set<std::pair<int32_t, int32_t>> tracks;
  for (const Event& e : trace.events) tracks.insert({e.device, e.stream});
  std::set<int32_t> devices;
  for (const auto& [device, stream] : tracks) {
    if (devices.insert(device).second) {
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", device}, {"tid", 0},
                        {"args", {{"name", fmt::format("GPU {}", device)}}}});
      events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", device}, {"tid", 0},
                        {"args", {{"sort_index", device}}}});
    }
  }
  for (const auto& [device, stream] : tracks) {
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", device}, {"tid", stream},
                      {"args", {{"name", fmt::format("stream {} ({})", stream,
                                                     sched::stream_kind_name(sched::stream_kind(stream)))}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", device}, {"tid", stream},
                      {"args", {{"sort_index", stream}}}});
  }

  for (uint32_t i : display_order(trace)) {
    const Event& e = trace.events[i];
    Json args = {{"instruction", trace.instruction_of(e)}, {"kind", event_kind_name(e.kind)},
                 {"bytes", e.bytes}, {"flops", e.flops}, {"correlation", e.correlation},
                 {"iteration", e.iteration}, {"stream_kind", sched::stream_kind_name(e.stream_kind)}};
    events.push_back({{"name", trace.name_of(e)}, {"cat", event_kind_name(e.kind)}, {"ph", "X"},
                      {"ts", to_us(e.start_ns - origin)}, {"dur", to_us(e.duration_ns())}, {"pid", e.device},
                      {"tid", e.stream}, {"args", std::move(args)}});
  }

  // Flow arrows for waits: the start binds to the slice enclosing its ts on
  // the source track, the finish (bp "e") to the slice enclosing its ts.
  uint64_t flow_id = 0;
  for (const Dependency& d : trace.dependencies) {
    if (d.from >= trace.events.size() || d.to >= trace.events.size()) continue;
    const Event& from = trace.events[d.from];
    const Event& to = trace.events[d.to];
    ++flow_id;
    events.push_back({{"name", "wait"}, {"cat", "dependency"}, {"ph", "s"}, {"id", flow_id}, {"pid", from.device},
                      {"tid", from.stream}, {"ts", to_us(from.start_ns - origin)}});
    events.push_back({{"name", "wait"}, {"cat", "dependency"}, {"ph", "f"}, {"bp", "e"}, {"id", flow_id},
                      {"pid", to.device}, {"tid", to.stream}, {"ts", to_us(to.start_ns - origin)}});
  }

  Json root;
  root["traceEvents"] = std::move(events);
  root["displayTimeUnit"] = "ns";
  root["otherData"] = {{"run", info.id}, {"name", info.name}, {"program", info.program_name},
                       {"backend", info.backend}, {"device_model", info.device_model},
                       {"makespan_ns", info.makespan_ns != 0 ? info.makespan_ns : trace.makespan_ns()},
                       {"created_at", info.created_at}};
  return root.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string trace_csv(const Trace& trace) {
  int64_t origin = origin_of(trace);
  std::string out =
      "device,stream,stream_kind,kind,name,instruction,start_ns,end_ns,duration_ns,bytes,flops,correlation,"
      "iteration\n";
  for (uint32_t i : display_order(trace)) {
    const Event& e = trace.events[i];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", e.device, e.stream,
                       sched::stream_kind_name(e.stream_kind), event_kind_name(e.kind), csv_field(trace.name_of(e)),
                       csv_field(trace.instruction_of(e)), e.start_ns - origin, e.end_ns - origin, e.duration_ns(),
                       e.bytes, e.flops, e.correlation, e.iteration);
  }
  return out;
}

Status export_run(const RunInfo& info, const Trace& trace, ExportFormat format, const std::string& path) {
  std::string content = format == ExportFormat::kChrome ? chrome_trace_json(info, trace) : trace_csv(trace);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  size_t written = std::fwrite(content.data(), 1, content.size(), f);
  bool ok = written == content.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) return runtime_error(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  return Status::ok();
}

}  // namespace sl::trace
