#include "cupti_tracer/capture_file.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>
#include <variant>
#include <vector>
#include <fstream>
#include <istream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "core/trace/capture_losses.h"
#include "core/trace/host_probe.h"
#include "cupti_tracer/collector.h"

namespace sl::cupti {

using nlohmann::json;

std::string capture_line(const Activity& activity) {
  json j;
  std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, KernelActivity>) {
          j = {{"k", "kernel"}, {"dev", a.device}, {"ctx", a.context}, {"stream", a.stream}, {"corr", a.correlation},
               {"start", a.start_ns}, {"end", a.end_ns}, {"name", std::string(a.name)}};
        } else if constexpr (std::is_same_v<T, MemcpyActivity>) {
          j = {{"k", "memcpy"}, {"dev", a.device}, {"ctx", a.context}, {"stream", a.stream}, {"corr", a.correlation},
               {"start", a.start_ns}, {"end", a.end_ns}, {"bytes", a.bytes}, {"copy", a.copy_kind}};
        } else if constexpr (std::is_same_v<T, MemsetActivity>) {
          j = {{"k", "memset"}, {"dev", a.device}, {"ctx", a.context}, {"stream", a.stream}, {"corr", a.correlation},
               {"start", a.start_ns}, {"end", a.end_ns}, {"bytes", a.bytes}};
        }
      },
      activity);
  if (j.is_null()) return {};
  // Kernel names can hold any byte; replace invalid UTF-8 instead of throwing.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string capture_meta_line(long pid, const std::string& command, uint64_t t0) {
  json j = {{"k", "meta"}, {"version", 1}, {"pid", pid}, {"command", command}};
  if (t0 != 0) j["t0"] = t0;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string capture_range_line(bool on, uint64_t timestamp) {
  return json{{"k", "range"}, {"on", on}, {"t", timestamp}}.dump();
}

std::string capture_host_line(const std::string& at, int64_t probe_ns, uint64_t timestamp) {
  return json{{"k", "host"}, {"at", at}, {"probe_ns", probe_ns}, {"t", timestamp}}.dump();
}

std::string capture_device_line(int device, const std::string& name) {
  return json{{"k", "device"}, {"dev", device}, {"name", name}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

// The next line into `line` (false at the end). A capture's records are
// short (a kernel's name a few KB at most): a longer line is damage, so it
// is cut at kMaxCaptureLineBytes, read on to its end, and said (*too_long)
// rather than held whole in memory.
bool next_line(std::istream& in, std::string& line, bool* too_long) {
  line.clear();
  *too_long = false;
  std::streambuf* buffer = in.rdbuf();
  bool any = false;
  for (int c = buffer->sbumpc(); c != std::char_traits<char>::eof(); c = buffer->sbumpc()) {
    any = true;
    if (c == '\n') return true;
    if (line.size() < kMaxCaptureLineBytes) {
      line.push_back(static_cast<char>(c));
    } else {
      *too_long = true;
    }
  }
  return any;
}

}  // namespace

Status read_capture(std::istream& in, ActivitySink& sink, int64_t* bad_lines, CaptureHost* host) {
  std::string line;
  int64_t bad = 0;
  bool too_long = false;
  while (next_line(in, line, &too_long)) {
    if (too_long) {
      ++bad;
      continue;
    }
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("k") || !j["k"].is_string()) { ++bad; continue; }
    const std::string k = j["k"].get<std::string>();
    try {
      if (k == "kernel") {
        KernelActivity a;
        a.device = j.at("dev"); a.context = j.value("ctx", 0u); a.stream = j.at("stream");
        a.correlation = j.value("corr", 0u); a.start_ns = j.at("start"); a.end_ns = j.at("end");
        const std::string name = j.value("name", std::string());  // outlives on_activity
        a.name = name;
        sink.on_activity(a);
      } else if (k == "memcpy") {
        MemcpyActivity a;
        a.device = j.at("dev"); a.context = j.value("ctx", 0u); a.stream = j.at("stream");
        a.correlation = j.value("corr", 0u); a.start_ns = j.at("start"); a.end_ns = j.at("end");
        a.bytes = j.value("bytes", uint64_t{0}); a.copy_kind = j.value("copy", uint8_t{0});
        sink.on_activity(a);
      } else if (k == "memset") {
        MemsetActivity a;
        a.device = j.at("dev"); a.context = j.value("ctx", 0u); a.stream = j.at("stream");
        a.correlation = j.value("corr", 0u); a.start_ns = j.at("start"); a.end_ns = j.at("end");
        a.bytes = j.value("bytes", uint64_t{0});
        sink.on_activity(a);
      } else if (k == "dropped") {
        sink.on_dropped(j.at("n").get<uint64_t>());
      } else if (k == "unknown") {
        sink.on_unknown_kind(j.value("kind", 0u));
      } else if (k == "host") {
        const std::string at = j.at("at").get<std::string>();
        const int64_t probe = j.at("probe_ns").get<int64_t>();
        if ((at != "start" && at != "end") || probe <= 0) {
          ++bad;
        } else if (host != nullptr) {
          (at == "start" ? host->probe_start_ns : host->probe_end_ns) = probe;
        }
      } else if (k == "device") {
        const int device = j.at("dev").get<int>();
        const std::string name = j.at("name").get<std::string>();
        if (device < 0 || name.empty() || name.size() > 256) {
          ++bad;
        } else if (host != nullptr) {
          host->gpu_names[device] = name;
        }
      } else if (k != "meta" && k != "range") {
        ++bad;
      }
    } catch (const json::exception&) {
      ++bad;  // a field missing or of the wrong type
    }
  }
  if (bad_lines) *bad_lines = bad;
  return ok_status();
}

namespace {

// The run's GPU: the one name its devices share, or each device's name.
std::string gpu_name_of(const std::map<int, std::string>& names) {
  std::string out;
  for (const auto& [device, name] : names) {
    if (out == name) continue;
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

// The time intervals a window keeps, from the file's meta and range lines.
struct Intervals {
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // [from, to), in order of `from`
  // By bisection: a capture of a training loop can hold a range per step.
  bool keeps(uint64_t t) const {
    auto after = std::upper_bound(spans.begin(), spans.end(), t,
                                  [](uint64_t value, const auto& span) { return value < span.first; });
    return after != spans.begin() && t < std::prev(after)->second;
  }
};

Result<Intervals> window_intervals(const std::string& path, const CaptureWindow& window) {
  std::ifstream in(path);
  if (!in) return invalid_input(path + ": cannot open capture file");
  uint64_t t0 = 0;
  std::vector<std::pair<bool, uint64_t>> marks;
  std::string line;
  bool too_long = false;
  while (next_line(in, line, &too_long)) {
    if (too_long) continue;
    if (line.find("\"meta\"") == std::string::npos && line.find("\"range\"") == std::string::npos) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("k") || !j["k"].is_string()) continue;
    if (j["k"] == "meta" && j.contains("t0") && j["t0"].is_number_unsigned()) t0 = j["t0"].get<uint64_t>();
    if (j["k"] == "range" && j.contains("t") && j["t"].is_number_unsigned() && j.contains("on") && j["on"].is_boolean()) {
      marks.emplace_back(j["on"].get<bool>(), j["t"].get<uint64_t>());
    }
  }
  if ((window.delay_ns > 0 || window.duration_ns > 0) && t0 == 0) {
    return invalid_input(path + ": the capture has no start time (t0), so --delay/--duration cannot apply");
  }
  Intervals out;
  const uint64_t from = t0 + static_cast<uint64_t>(std::max<int64_t>(0, window.delay_ns));
  const uint64_t to = window.duration_ns > 0 ? from + static_cast<uint64_t>(window.duration_ns) : UINT64_MAX;
  if (!window.profiler_ranges) {
    out.spans.emplace_back(from, to);
    return out;
  }
  std::sort(marks.begin(), marks.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::optional<uint64_t> open;
  for (const auto& [on, t] : marks) {
    if (on && !open) open = t;
    if (!on && open) {
      out.spans.emplace_back(std::max(*open, from), std::min(t, to));
      open.reset();
    }
  }
  if (open) out.spans.emplace_back(std::max(*open, from), to);
  return out;
}

// Passes on the records that start inside the window; counts the others.
class WindowSink : public ActivitySink {
 public:
  WindowSink(ActivitySink& inner, const Intervals& keep) : inner_(inner), keep_(keep) {}
  void on_activity(const Activity& activity) override {
    const std::optional<uint64_t> start = std::visit(
        [](const auto& a) -> std::optional<uint64_t> {
          if constexpr (requires { a.start_ns; }) return a.start_ns;
          return std::nullopt;
        },
        activity);
    if (!start || keep_.keeps(*start)) {
      inner_.on_activity(activity);
    } else {
      ++outside_;
    }
  }
  void on_dropped(uint64_t count) override { inner_.on_dropped(count); }
  void on_unknown_kind(uint32_t kind) override { inner_.on_unknown_kind(kind); }
  int64_t outside() const { return outside_; }

 private:
  ActivitySink& inner_;
  const Intervals& keep_;
  int64_t outside_ = 0;
};

}  // namespace

Result<trace::Trace> import_capture_file(const std::string& path, const CaptureWindow& window) {
  // Read twice (ranges, then records) and by size: a regular file only, so
  // a device node such as /dev/zero or a pipe is refused, not read forever.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return invalid_input(path + ": cannot open capture file");
  if (!std::filesystem::is_regular_file(status)) return invalid_input(path + ": not a regular file (a capture file is one)");
  const uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (!ec && bytes > static_cast<uintmax_t>(kMaxCaptureBytes)) {
    return invalid_input(fmt::format("{}: {} GiB, over the {} GiB a capture file may hold (capture less: "
                                     "--duration, --capture-range)",
                                     path, bytes >> 30, kMaxCaptureBytes >> 30));
  }
  const bool windowed = window.delay_ns > 0 || window.duration_ns > 0 || window.profiler_ranges;
  Intervals keep;
  if (windowed) {
    auto intervals = window_intervals(path, window);
    if (!intervals) return intervals.status();
    keep = std::move(*intervals);
  }
  std::ifstream in(path);
  if (!in) return invalid_input(path + ": cannot open capture file");
  ActivityCollector collector(CollectorOptions{.keep_unattributed = true, .cuda_stream_ids = true});
  WindowSink filtered(collector, keep);
  int64_t bad = 0;
  CaptureHost host;
  ActivitySink& sink = windowed ? static_cast<ActivitySink&>(filtered) : collector;
  SL_RETURN_IF_ERROR(read_capture(in, sink, &bad, &host));
  trace::Trace t = collector.build_trace();
  t.normalize_time();
  if (bad > 0) {
    t.add_counter(trace::kCaptureBadLinesCounter, bad, "lines of the capture file that could not be read");
  }
  if (host.probe_start_ns) {
    t.add_counter(trace::kHostProbeStartCounter, *host.probe_start_ns, trace::kHostProbeDescription);
  }
  if (host.probe_end_ns) {
    t.add_counter(trace::kHostProbeEndCounter, *host.probe_end_ns,
                  "as host_probe_start_ns, at the capture's end (after the program's last step)");
  }
  t.gpu_name = gpu_name_of(host.gpu_names);
  if (filtered.outside() > 0) {
    t.add_counter("capture_records_outside_window", filtered.outside(),
                  "records before --delay, after --duration or outside the profiler ranges, not kept");
  }
  return t;
}

}  // namespace sl::cupti
