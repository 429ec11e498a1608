#pragma once
// The file `streamlens capture` reads back: JSON lines written by the
// injection library (libstreamlens_inject.so) at the captured program's exit.
// Format (one object per line, see README.md):
//   {"k":"meta","version":1,"pid":123,"command":"..."}
//   {"k":"kernel","dev":0,"ctx":1,"stream":7,"corr":42,"start":N,"end":N,"name":"_Z..."}
//   {"k":"memcpy","dev":0,...,"bytes":N,"copy":1}   {"k":"memset",...,"bytes":N}
//   {"k":"dropped","n":N}   {"k":"unknown","kind":K}
//   {"k":"range","on":true,"t":N}   (--capture-range: cudaProfilerStart/Stop, or an NVTX range's push/pop)
//   {"k":"host","at":"start","probe_ns":N,"t":N}   (host_pace.h: the core's pace at the start or "end")
//   {"k":"device","dev":0,"name":"NVIDIA H100 80GB HBM3"}   (each GPU the process saw, at the end)
// "meta" may carry "t0": the CUPTI timestamp when the process was injected.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

#include "core/common/status.h"
#include "core/trace/trace.h"
#include "cupti_tracer/activity_sink.h"

namespace sl::cupti {

// One line (no newline) for the activities worth keeping; empty for others.
std::string capture_line(const Activity& activity);
std::string capture_meta_line(long pid, const std::string& command, uint64_t t0 = 0);
std::string capture_range_line(bool on, uint64_t timestamp);
// `at` is "start" or "end": when the probe ran.
std::string capture_host_line(const std::string& at, int64_t probe_ns, uint64_t timestamp);
// The name CUDA gives device `device` (cuDeviceGetName).
std::string capture_device_line(int device, const std::string& name);

// What a capture says of its machine besides the records: host_pace.h's
// probe at the capture's start and end, and its GPUs' names by device
// (each absent in captures made before it was written).
struct CaptureHost {
  std::optional<int64_t> probe_start_ns;
  std::optional<int64_t> probe_end_ns;
  std::map<int, std::string> gpu_names;
};

// Which records of a capture make the run, as `nsys profile` chooses them:
// from `delay_ns` after the process was injected, for `duration_ns` (0: to
// the end), and with `profiler_ranges` only inside the file's ranges
// (cudaProfilerStart to cudaProfilerStop, or NVTX ranges of one name). A
// record is kept when it starts inside.
// A line longer than this is counted bad and not held (records are short);
// a file larger than kMaxCaptureBytes is refused.
constexpr size_t kMaxCaptureLineBytes = size_t{1} << 20;
constexpr int64_t kMaxCaptureBytes = int64_t{32} << 30;

struct CaptureWindow {
  int64_t delay_ns = 0;
  int64_t duration_ns = 0;
  bool profiler_ranges = false;
};

// Feeds every record of a capture stream to `sink`. Malformed lines are
// counted in *bad_lines, not fatal; an unreadable file is kInvalidInput.
// The host lines go to *host when it is given.
Status read_capture(std::istream& in, ActivitySink& sink, int64_t* bad_lines, CaptureHost* host = nullptr);

// The whole import: records -> trace, streams numbered per device by first
// appearance, times from the first record, counters for odd lines and for
// the host's probe (host_probe_start_ns, host_probe_end_ns).
Result<trace::Trace> import_capture_file(const std::string& path, const CaptureWindow& window = {});

}  // namespace sl::cupti
