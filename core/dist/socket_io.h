#pragma once
// TCP helpers behind the rendezvous (internal to core/dist). Every blocking
// step polls against one deadline, so nothing waits forever; failures come
// back as text (strerror) for the caller to put into a Status naming the peer.

#include <chrono>
#include <cstddef>
#include <string>

namespace sl::dist {

using Clock = std::chrono::steady_clock;

// Owns one file descriptor.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { close(); }
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void close();

 private:
  int fd_ = -1;
};

enum class IoStatus { kOk, kTimeout, kClosed, kError };

struct IoResult {
  IoStatus status = IoStatus::kOk;
  std::string error;  // strerror text for kError
  bool ok() const { return status == IoStatus::kOk; }
  std::string describe() const;  // "timed out", "connection closed", or the error
};

IoResult send_all(int fd, const void* data, size_t size, Clock::time_point deadline);
IoResult recv_all(int fd, void* data, size_t size, Clock::time_point deadline);

// A listening socket on every interface (IPv6 dual-stack when possible, else
// IPv4) with SO_REUSEADDR; `error` set on failure.
Socket listen_tcp(int port, int backlog, std::string* error);

// Accepts one connection (TCP_NODELAY, non-blocking); kTimeout at the deadline.
IoResult accept_until(int listen_fd, Clock::time_point deadline, Socket* out);

// One attempt to connect to host:port, trying each resolved address.
IoResult connect_once(const std::string& host, int port, Clock::time_point deadline, Socket* out);

// "10.0.0.1:29500", "[::1]:29500".
std::string host_port(const std::string& host, int port);
// "60 s", "300 ms".
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace sl::dist
