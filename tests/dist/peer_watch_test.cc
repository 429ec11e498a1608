// PeerWatch: a rank whose connection closes is reported once; one that sends
// (it reached its next rendezvous call) is not, until it closes.

#include "core/dist/peer_watch.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace sl::dist {
namespace {

using namespace std::chrono_literals;

// Records the ranks reported lost, and lets a test wait for one.
struct Lost {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> ranks;
  void operator()(int rank) {
    std::lock_guard<std::mutex> lock(mu);
    ranks.push_back(rank);
    cv.notify_all();
  }
  bool wait_for_one(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, timeout, [this] { return !ranks.empty(); });
  }
};

struct SocketPair {
  int watched = -1, peer = -1;
  SocketPair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    watched = fds[0];
    peer = fds[1];
  }
  ~SocketPair() {
    if (watched >= 0) close(watched);
    if (peer >= 0) close(peer);
  }
  void close_peer() {
    close(peer);
    peer = -1;
  }
};

TEST(PeerWatch, AClosedConnectionIsReportedWithItsRank) {
  SocketPair a, b;
  Lost lost;
  PeerWatch watch({{a.watched, 1}, {b.watched, 2}}, [&](int r) { lost(r); });
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(lost.ranks.empty());
  b.close_peer();
  ASSERT_TRUE(lost.wait_for_one(5s));
  std::this_thread::sleep_for(200ms);  // and only once
  std::lock_guard<std::mutex> lock(lost.mu);
  EXPECT_EQ(lost.ranks, std::vector<int>{2});
}

TEST(PeerWatch, DataMeansTheRankFinishedButItsClosingStillCounts) {
  SocketPair a;
  Lost lost;
  PeerWatch watch({{a.watched, 3}}, [&](int r) { lost(r); });
  ASSERT_EQ(write(a.peer, "x", 1), 1);  // as a barrier message would
  EXPECT_FALSE(lost.wait_for_one(300ms));
  char c = 0;
  EXPECT_EQ(recv(a.watched, &c, 1, MSG_PEEK | MSG_DONTWAIT), 1);  // nothing was read
  a.close_peer();  // an error frame, then closing: a failed rank
  ASSERT_TRUE(lost.wait_for_one(5s));
  EXPECT_EQ(lost.ranks.front(), 3);
}

TEST(PeerWatch, StopsPromptlyWithNothingToReport) {
  SocketPair a;
  Lost lost;
  // A watch that never notices its stop hangs here: the test's timeout
  // (tests/CMakeLists.txt) fails it, with no clock to flake under load.
  {
    PeerWatch watch({{a.watched, 1}}, [&](int r) { lost(r); });
  }
  EXPECT_TRUE(lost.ranks.empty());
}

}  // namespace
}  // namespace sl::dist
