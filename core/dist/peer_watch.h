#pragma once
// Notices, from a thread of its own, another rank whose rendezvous
// connection closes while this process runs its iterations: that rank's
// process ended, or its run failed and closed its rendezvous. NCCL would wait
// for such a rank forever; the callback lets the caller abort instead.
//
// Nothing is read: the rendezvous reads its connections later, from its own
// thread. Data arriving means that rank reached its next rendezvous call (it
// finished its iterations); its connection is then watched for closing only.

#include <atomic>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

namespace sl::dist {

class PeerWatch {
 public:
  // `connections`: (file descriptor, rank) pairs, as Rendezvous::connections
  // gives them. `lost(rank)` runs once, on the watch's thread.
  PeerWatch(std::vector<std::pair<int, int>> connections, std::function<void(int rank)> lost);
  ~PeerWatch();  // stops watching and joins the thread
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

 private:
  void loop();

  std::vector<std::pair<int, int>> connections_;
  std::function<void(int)> lost_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace sl::dist
