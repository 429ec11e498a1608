#include "core/dist/socket_io.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace sl::dist {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

IoResult failed(int err) { return {IoStatus::kError, errno_text(err)}; }

// Milliseconds left until `deadline`, for poll(); 0 once it has passed.
int poll_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  // Round up so a sub-millisecond remainder still waits instead of spinning.
  return static_cast<int>(std::clamp<long long>(left + 1, 0, 1 << 30));
}

// Waits for `events` on fd; kTimeout at the deadline.
IoResult wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    if (Clock::now() >= deadline) return {IoStatus::kTimeout, {}};
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, poll_ms(deadline));
    if (n < 0) {
      if (errno == EINTR) continue;
      return failed(errno);
    }
    if (n == 0) continue;  // loop re-checks the deadline
    return {};             // readable/writable or an error condition the next call reports
  }
}

bool set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

int Socket::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string IoResult::describe() const {
  switch (status) {
    case IoStatus::kOk:
      return "ok";
    case IoStatus::kTimeout:
      return "timed out";
    case IoStatus::kClosed:
      return "connection closed";
    case IoStatus::kError:
      return error;
  }
  return error;
}

IoResult send_all(int fd, const void* data, size_t size, Clock::time_point deadline) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      IoResult waited = wait_for(fd, POLLOUT, deadline);
      if (!waited.ok()) return waited;
      continue;
    }
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return {IoStatus::kClosed, errno_text(errno)};
    return failed(errno);
  }
  return {};
}

IoResult recv_all(int fd, void* data, size_t size, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return {IoStatus::kClosed, {}};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      IoResult waited = wait_for(fd, POLLIN, deadline);
      if (!waited.ok()) return waited;
      continue;
    }
    if (errno == ECONNRESET) return {IoStatus::kClosed, errno_text(errno)};
    return failed(errno);
  }
  return {};
}

Socket listen_tcp(int port, int backlog, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(nullptr, service.c_str(), &hints, &found); rc != 0) {
    *error = ::gai_strerror(rc);
    return {};
  }
  // Prefer IPv6 (dual-stack accepts IPv4 too); fall back to whatever binds.
  std::vector<addrinfo*> order;
  for (addrinfo* a = found; a; a = a->ai_next) order.push_back(a);
  std::stable_sort(order.begin(), order.end(), [](addrinfo* a, addrinfo* b) {
    return a->ai_family == AF_INET6 && b->ai_family != AF_INET6;
  });
  Socket result;
  *error = "no address to listen on";
  for (addrinfo* a : order) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.valid()) {
      *error = errno_text(errno);
      continue;
    }
    int one = 1, zero = 0;
    ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (a->ai_family == AF_INET6) ::setsockopt(s.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    if (::bind(s.fd(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(s.fd(), backlog) != 0 ||
        !set_nonblocking(s.fd())) {
      *error = errno_text(errno);
      continue;
    }
    result = std::move(s);
    error->clear();
    break;
  }
  ::freeaddrinfo(found);
  return result;
}

IoResult accept_until(int listen_fd, Clock::time_point deadline, Socket* out) {
  for (;;) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      set_nodelay(fd);
      *out = Socket(fd);
      return {};
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return failed(errno);
    IoResult waited = wait_for(listen_fd, POLLIN, deadline);
    if (!waited.ok()) return waited;
  }
}

IoResult connect_once(const std::string& host, int port, Clock::time_point deadline, Socket* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return {IoStatus::kError, ::gai_strerror(rc)};
  }
  IoResult last{IoStatus::kError, "no address"};
  for (addrinfo* a = found; a; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.valid()) {
      last = failed(errno);
      continue;
    }
    if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last = failed(errno);
        continue;
      }
      IoResult waited = wait_for(s.fd(), POLLOUT, deadline);
      if (!waited.ok()) {
        last = waited;
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      if (::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) {
        last = failed(err);
        continue;
      }
    }
    set_nodelay(s.fd());
    *out = std::move(s);
    last = {};
    break;
  }
  ::freeaddrinfo(found);
  return last;
}

std::string host_port(const std::string& host, int port) {
  bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string format_duration(std::chrono::milliseconds duration) {
  long long ms = duration.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms) + " ms";
}

}  // namespace sl::dist
