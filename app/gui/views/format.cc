#include <fmt/format.h>

#include "app/gui/layout/rate_format.h"
#include "app/gui/views/views.h"
#include "core/sched/streams.h"

namespace sl::gui {

std::string stream_name(int stream) {
  if (stream >= sched::kCommStreamBase) return fmt::format("comm {}", stream);
  return stream == sched::kMainStream ? "0 (main)" : fmt::format("{}", stream);
}

std::string stream_name(int stream, trace::StreamKind kind) {
  if (kind == trace::StreamKind::kCommunication) return fmt::format("comm {}", stream);
  return stream == sched::kMainStream ? "0 (main)" : fmt::format("{}", stream);
}

std::string format_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (int64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / (1 << 30));
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.2f} MiB", b / (1 << 20));
  if (bytes >= (int64_t{1} << 10)) return fmt::format("{:.2f} KiB", b / (1 << 10));
  return fmt::format("{} B", bytes);
}

std::string event_rate(int64_t duration_ns, const trace::TraceStore::EventExtras& extras) {
  const double seconds = static_cast<double>(duration_ns) * 1e-9;
  if (seconds <= 0) return "";
  if (extras.flops > 0) return format_rate(static_cast<double>(extras.flops) / seconds, "FLOP/s");
  if (extras.bytes > 0) return format_rate(static_cast<double>(extras.bytes) / seconds, "B/s");
  return "";
}

}  // namespace sl::gui
