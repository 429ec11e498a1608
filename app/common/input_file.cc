#include "app/common/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sl::app {

Result<std::string> read_input_file(const std::string& path, int64_t max_bytes, const char* what) {
  // O_NONBLOCK: opening a FIFO without a writer must not hang here; it is
  // cleared before reading.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return invalid_input(fmt::format("{}: error: cannot open {}: {}", path, what, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return invalid_input(fmt::format("{}: error: cannot read {}: {}", path, what, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) return invalid_input(fmt::format("{}: error: is a directory, not a {}", path, what));
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    return invalid_input(fmt::format("{}: error: is a device or socket, not a {} file", path, what));
  }
  const auto limit_text = [&] { return fmt::format("{} MiB", max_bytes >> 20); };
  if (S_ISREG(st.st_mode) && st.st_size > max_bytes) {
    return invalid_input(fmt::format("{}: error: {} of {} bytes is larger than the limit of {}", path, what,
                                     static_cast<long long>(st.st_size), limit_text()));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return invalid_input(fmt::format("{}: error: cannot read {}: {}", path, what, std::strerror(errno)));
    if (n == 0) break;
    if (static_cast<int64_t>(text.size()) + n > max_bytes) {
      return invalid_input(fmt::format("{}: error: {} is larger than the limit of {}", path, what, limit_text()));
    }
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace sl::app
