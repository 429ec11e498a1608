#pragma once
// A small TCP rendezvous for multi-process runs (one process per GPU): rank 0
// listens on MASTER_PORT, the other ranks connect to MASTER_ADDR, and the
// collectives below exchange a few bytes (NCCL unique ids, run ids) in a star
// through rank 0. Every wait is bounded by the timeout given to connect();
// errors are values naming the peer and address, never a crash or a hang.
// A rendezvous that failed once stays failed and has closed its sockets, so
// its peers see the failure at once instead of waiting for their timeout.
// Not thread-safe: one thread per rank calls the collectives, every rank in
// the same order.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/dist/dist_env.h"

namespace sl::dist {

class Rendezvous {
 public:
  // Returns once all world_size ranks have joined. The non-root ranks retry
  // until the timeout while rank 0 is not listening yet. kRuntime on failure.
  static Result<std::unique_ptr<Rendezvous>> connect(
      const DistEnv& env, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }

  // Every rank passes its bytes, every rank gets all ranks' bytes in rank order.
  Result<std::vector<std::string>> all_gather(const std::string& mine);
  // Rank 0's bytes to every rank (the other ranks' argument is ignored).
  Result<std::string> broadcast(const std::string& from_root);
  // Returns once every rank has called it.
  Status barrier();

  // The other ranks' connections as (file descriptor, rank), for a
  // PeerWatch while no collective runs here: rank 0 holds one per rank, the
  // others one to rank 0.
  std::vector<std::pair<int, int>> connections() const;

 private:
  struct Peers;  // the sockets, in the .cc
  Rendezvous(DistEnv env, std::chrono::milliseconds timeout, std::unique_ptr<Peers> peers);

  // The two halves of every collective, tagged with the operation and its
  // sequence number so ranks calling collectives in different orders are an
  // error. Rank 0 gets every rank's bytes; the others get an empty vector.
  Result<std::vector<std::string>> gather_to_root(uint8_t op, const std::string& mine);
  // Rank 0 sends `payload` to every rank; every rank returns what rank 0 sent.
  Result<std::string> send_from_root(uint8_t op, const std::string& payload);
  Status check_usable(uint8_t op);
  // Remembers the first error and closes the sockets so peers notice at once.
  Status fail(Status status);

  DistEnv env_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Peers> peers_;
  uint32_t seq_ = 0;
  Status broken_;
};

}  // namespace sl::dist
