#include "core/dist/peer_watch.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace sl::dist {

namespace {
constexpr int kPollMs = 50;  // how soon a stop is noticed
}  // namespace

PeerWatch::PeerWatch(std::vector<std::pair<int, int>> connections, std::function<void(int rank)> lost)
    : connections_(std::move(connections)), lost_(std::move(lost)), thread_([this] { loop(); }) {}

PeerWatch::~PeerWatch() {
  stop_.store(true);
  thread_.join();
}

void PeerWatch::loop() {
  std::vector<pollfd> fds;
  for (const auto& [fd, rank] : connections_) {
    if (fd >= 0) fds.push_back({fd, POLLIN | POLLRDHUP, 0});
  }
  while (!stop_.load() && !fds.empty()) {
    if (poll(fds.data(), fds.size(), kPollMs) <= 0) continue;  // timeout or EINTR
    for (size_t i = 0; i < fds.size(); ++i) {
      const short ev = fds[i].revents;
      if (ev == 0) continue;
      bool closed = (ev & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL)) != 0;
      if (!closed && (ev & POLLIN)) {
        char byte = 0;
        const ssize_t n = recv(fds[i].fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        closed = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
        if (!closed) fds[i].events = POLLRDHUP;  // it finished: only its closing matters now
      }
      if (closed) {
        int rank = -1;
        for (const auto& [fd, r] : connections_) {
          if (fd == fds[i].fd) rank = r;
        }
        lost_(rank);
        return;  // one abort is enough
      }
    }
  }
}

}  // namespace sl::dist
