#include "cupti_tracer/capture_file.h"

#include <fstream>
#include <istream>
#include <nlohmann/json.hpp>
#include <type_traits>

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

std::string capture_meta_line(long pid, const std::string& command) {
  json j = {{"k", "meta"}, {"version", 1}, {"pid", pid}, {"command", command}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Status read_capture(std::istream& in, ActivitySink& sink, int64_t* bad_lines) {
  std::string line;
  int64_t bad = 0;
  while (std::getline(in, line)) {
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
      } else if (k != "meta") {
        ++bad;
      }
    } catch (const json::exception&) {
      ++bad;  // a field missing or of the wrong type
    }
  }
  if (bad_lines) *bad_lines = bad;
  return Status::ok();
}

Result<trace::Trace> import_capture_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_input(path + ": cannot open capture file");
  ActivityCollector collector(CollectorOptions{.keep_unattributed = true, .cuda_stream_ids = true});
  int64_t bad = 0;
  SL_RETURN_IF_ERROR(read_capture(in, collector, &bad));
  trace::Trace t = collector.build_trace();
  t.normalize_time();
  if (bad > 0) t.add_counter("capture_bad_lines", bad, "lines of the capture file that could not be read");
  return t;
}

}  // namespace sl::cupti
