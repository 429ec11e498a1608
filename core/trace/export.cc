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

namespace {

// Where an export goes: a string (tests, small runs) or a file written as it
// is produced, so memory stays bounded by one event, not the output size.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(std::string_view text) = 0;
};

class StringSink final : public Sink {
 public:
  void write(std::string_view text) override { out_.append(text); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class FileSink final : public Sink {
 public:
  explicit FileSink(std::FILE* f) : f_(f) { buffer_.reserve(kFlushBytes); }
  void write(std::string_view text) override {
    buffer_.append(text);
    if (buffer_.size() >= kFlushBytes) flush();
  }
  // false once any write failed.
  bool flush() {
    if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), f_) != buffer_.size()) ok_ = false;
    buffer_.clear();
    return ok_;
  }

 private:
  static constexpr size_t kFlushBytes = size_t{1} << 20;
  std::FILE* f_;
  std::string buffer_;
  bool ok_ = true;
};

// Invalid UTF-8 in a name is replaced (U+FFFD), never thrown: the output is
// always valid JSON.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

void write_chrome(const RunInfo& info, const Trace& trace, Sink& out) {
  int64_t origin = origin_of(trace);
  bool first = true;
  auto emit = [&](const Json& event) {
    out.write(first ? "\n" : ",\n");
    first = false;
    out.write(dump(event));
  };
  out.write("{\"traceEvents\":[");

  std::set<std::pair<int32_t, int32_t>> tracks;
  for (const Event& e : trace.events) tracks.insert({e.device, e.stream});
  std::set<int32_t> devices;
  for (const auto& [device, stream] : tracks) {
    if (devices.insert(device).second) {
      emit({{"ph", "M"}, {"name", "process_name"}, {"pid", device}, {"tid", 0},
            {"args", {{"name", fmt::format("GPU {}", device)}}}});
      emit({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", device}, {"tid", 0},
            {"args", {{"sort_index", device}}}});
    }
  }
  for (const auto& [device, stream] : tracks) {
    emit({{"ph", "M"}, {"name", "thread_name"}, {"pid", device}, {"tid", stream},
          {"args", {{"name", fmt::format("stream {} ({})", stream,
                                         sched::stream_kind_name(sched::stream_kind(stream)))}}}});
    emit({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", device}, {"tid", stream},
          {"args", {{"sort_index", stream}}}});
  }

  for (uint32_t i : display_order(trace)) {
    const Event& e = trace.events[i];
    Json args = {{"instruction", trace.instruction_of(e)}, {"kind", event_kind_name(e.kind)},
                 {"bytes", e.bytes}, {"flops", e.flops}, {"correlation", e.correlation},
                 {"iteration", e.iteration}, {"stream_kind", sched::stream_kind_name(e.stream_kind)}};
    emit({{"name", trace.name_of(e)}, {"cat", event_kind_name(e.kind)}, {"ph", "X"},
          {"ts", to_us(saturating_sub(e.start_ns, origin))}, {"dur", to_us(e.duration_ns())}, {"pid", e.device},
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
    emit({{"name", "wait"}, {"cat", "dependency"}, {"ph", "s"}, {"id", flow_id}, {"pid", from.device},
          {"tid", from.stream}, {"ts", to_us(saturating_sub(from.start_ns, origin))}});
    emit({{"name", "wait"}, {"cat", "dependency"}, {"ph", "f"}, {"bp", "e"}, {"id", flow_id},
          {"pid", to.device}, {"tid", to.stream}, {"ts", to_us(saturating_sub(to.start_ns, origin))}});
  }

  Json other = {{"run", info.id}, {"name", info.name}, {"program", info.program_name},
                {"backend", info.backend}, {"device_model", info.device_model},
                {"makespan_ns", info.makespan_ns != 0 ? info.makespan_ns : trace.makespan_ns()},
                {"created_at", info.created_at}};
  out.write("\n],\"displayTimeUnit\":\"ns\",\"otherData\":");
  out.write(dump(other));
  out.write("}\n");
}

void write_csv(const Trace& trace, Sink& out) {
  int64_t origin = origin_of(trace);
  out.write(
      "device,stream,stream_kind,kind,name,instruction,start_ns,end_ns,duration_ns,bytes,flops,correlation,"
      "iteration\n");
  for (uint32_t i : display_order(trace)) {
    const Event& e = trace.events[i];
    out.write(fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", e.device, e.stream,
                          sched::stream_kind_name(e.stream_kind), event_kind_name(e.kind),
                          csv_field(trace.name_of(e)), csv_field(trace.instruction_of(e)),
                          saturating_sub(e.start_ns, origin), saturating_sub(e.end_ns, origin), e.duration_ns(),
                          e.bytes, e.flops, e.correlation, e.iteration));
  }
}

}  // namespace

std::string chrome_trace_json(const RunInfo& info, const Trace& trace) {
  StringSink out;
  write_chrome(info, trace, out);
  return out.take();
}

std::string trace_csv(const Trace& trace) {
  StringSink out;
  write_csv(trace, out);
  return out.take();
}

Status export_run(const RunInfo& info, const Trace& trace, ExportFormat format, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  FileSink out(f);
  if (format == ExportFormat::kChrome) {
    write_chrome(info, trace, out);
  } else {
    write_csv(trace, out);
  }
  bool ok = out.flush();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) return runtime_error(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  return ok_status();
}

}  // namespace sl::trace
