#pragma once
// The file `streamlens capture` reads back: JSON lines written by the
// injection library (libstreamlens_inject.so) at the captured program's exit.
// Format (one object per line, see README.md):
//   {"k":"meta","version":1,"pid":123,"command":"..."}
//   {"k":"kernel","dev":0,"ctx":1,"stream":7,"corr":42,"start":N,"end":N,"name":"_Z..."}
//   {"k":"memcpy","dev":0,...,"bytes":N,"copy":1}   {"k":"memset",...,"bytes":N}
//   {"k":"dropped","n":N}   {"k":"unknown","kind":K}

#include <iosfwd>
#include <string>

#include "core/common/status.h"
#include "core/trace/trace.h"
#include "cupti_tracer/activity_sink.h"

namespace sl::cupti {

// One line (no newline) for the activities worth keeping; empty for others.
std::string capture_line(const Activity& activity);
std::string capture_meta_line(long pid, const std::string& command);

// Feeds every record of a capture stream to `sink`. Malformed lines are
// counted in *bad_lines, not fatal; an unreadable file is kInvalidInput.
Status read_capture(std::istream& in, ActivitySink& sink, int64_t* bad_lines);

// The whole import: records -> trace, streams numbered per device by first
// appearance, times from the first record, counters for odd lines.
Result<trace::Trace> import_capture_file(const std::string& path);

}  // namespace sl::cupti
