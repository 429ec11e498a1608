// The TCP rendezvous with 2 and 4 ranks as threads on 127.0.0.1, and the ways
// it must fail: nobody listening, a rank that never comes, a rank that leaves
// early, ranks that disagree. Each failure must be an error, never a hang.

#include "core/dist/rendezvous.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace sl::dist {
namespace {

using std::chrono::milliseconds;

// A port nobody listens on right now: bind port 0, read it, let it go.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

DistEnv env_for(int rank, int world, int port) {
  DistEnv env;
  env.rank = rank;
  env.world_size = world;
  env.local_rank = rank;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  return env;
}

// Runs body(rank) on `world` threads and waits for all of them.
void run_ranks(int world, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
}

class Collectives : public ::testing::TestWithParam<int> {};

TEST_P(Collectives, AllGatherBroadcastBarrier) {
  const int world = GetParam();
  const int port = free_port();
  std::vector<std::string> errors(static_cast<size_t>(world));
  run_ranks(world, [&](int rank) {
    std::string& error = errors[static_cast<size_t>(rank)];
    auto rv = Rendezvous::connect(env_for(rank, world, port), std::chrono::seconds(20));
    if (!rv) {
      error = rv.status().message();
      return;
    }
    Rendezvous& r = **rv;
    EXPECT_EQ(r.rank(), rank);
    EXPECT_EQ(r.world_size(), world);
    for (int round = 0; round < 3; ++round) {
      // Sizes differ per rank (rank 0 empty) and the bytes include NULs.
      std::string mine(static_cast<size_t>(rank * 37 + round), '\0');
      for (size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<char>(rank * 31 + round + i);
      auto all = r.all_gather(mine);
      if (!all) {
        error = all.status().message();
        return;
      }
      EXPECT_EQ(all->size(), static_cast<size_t>(world));
      for (int other = 0; other < world && other < static_cast<int>(all->size()); ++other) {
        const std::string& got = (*all)[static_cast<size_t>(other)];
        ASSERT_EQ(got.size(), static_cast<size_t>(other * 37 + round));
        for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], static_cast<char>(other * 31 + round + i));
      }
      auto id = r.broadcast(rank == 0 ? "nccl-id-" + std::to_string(round) : "ignored");
      if (!id) {
        error = id.status().message();
        return;
      }
      EXPECT_EQ(*id, "nccl-id-" + std::to_string(round));
      Status barrier = r.barrier();
      if (!barrier.is_ok()) error = barrier.message();
    }
  });
  for (int r = 0; r < world; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(Ranks, Collectives, ::testing::Values(2, 4));

TEST(Rendezvous, LargeMessagesArriveWhole) {
  const int port = free_port();
  const std::string big(4 << 20, 'x');  // far beyond the socket buffers
  run_ranks(2, [&](int rank) {
    auto rv = Rendezvous::connect(env_for(rank, 2, port), std::chrono::seconds(20));
    ASSERT_TRUE(rv) << rv.status().message();
    auto all = (*rv)->all_gather(rank == 1 ? big : "small");
    ASSERT_TRUE(all) << all.status().message();
    EXPECT_EQ((*all)[0], "small");
    EXPECT_EQ((*all)[1].size(), big.size());
    auto b = (*rv)->broadcast(rank == 0 ? big : "");
    ASSERT_TRUE(b) << b.status().message();
    EXPECT_EQ(b->size(), big.size());
  });
}

TEST(Rendezvous, WorldOfOneNeedsNoNetwork) {
  auto rv = Rendezvous::connect(env_for(0, 1, 1), milliseconds(100));
  ASSERT_TRUE(rv) << rv.status().message();
  auto all = (*rv)->all_gather("me");
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, std::vector<std::string>{"me"});
  EXPECT_EQ(*(*rv)->broadcast("x"), "x");
  EXPECT_TRUE((*rv)->barrier().is_ok());
}

TEST(Rendezvous, ConnectTimesOutWhenNoRootListens) {
  const int port = free_port();
  // A connect that ignored its timeout would hang past the test's timeout
  // (tests/CMakeLists.txt); the message says it gave up at its own 300 ms.
  auto rv = Rendezvous::connect(env_for(1, 2, port), milliseconds(300));
  ASSERT_FALSE(rv);
  EXPECT_EQ(rv.status().code(), ErrorCode::kRuntime);
  const std::string& m = rv.status().message();
  EXPECT_NE(m.find("rank 1 could not reach MASTER_ADDR 127.0.0.1:" + std::to_string(port) + " within 300 ms"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("refused"), std::string::npos) << m;
}

TEST(Rendezvous, RootReportsRanksThatNeverJoin) {
  const int port = free_port();
  std::string root_error, peer_error;
  run_ranks(2, [&](int rank) {
    // World of 3, but rank 2 never starts. Rank 1's own timeout (300 s) is
    // past the test's: it must hear of the failure from the root, as its
    // message says, rather than time out itself.
    auto rv = Rendezvous::connect(env_for(rank, 3, port), milliseconds(rank == 0 ? 500 : 300000));
    ASSERT_FALSE(rv);
    (rank == 0 ? root_error : peer_error) = rv.status().message();
  });
  EXPECT_NE(root_error.find("only 2 of 3 ranks joined"), std::string::npos) << root_error;
  EXPECT_NE(root_error.find("missing ranks 2"), std::string::npos) << root_error;
  EXPECT_NE(peer_error.find("rank 1: connect with rank 0"), std::string::npos) << peer_error;
  EXPECT_NE(peer_error.find("only 2 of 3 ranks joined"), std::string::npos) << peer_error;
}

TEST(Rendezvous, PeerThatLeavesEarlyIsAnErrorOnTheOthers) {
  const int port = free_port();
  std::vector<std::string> errors(3);
  // Nobody may wait for the 300 s timeout (past the test's own): the
  // errors name the closed connection, not a timeout.
  run_ranks(3, [&](int rank) {
    auto rv = Rendezvous::connect(env_for(rank, 3, port), std::chrono::seconds(300));
    ASSERT_TRUE(rv) << rv.status().message();
    if (rank == 2) return;  // exits (closes its connection) without taking part
    auto all = (*rv)->all_gather("x");
    ASSERT_FALSE(all);
    errors[static_cast<size_t>(rank)] = all.status().message();
    // A failed rendezvous stays failed, at once.
    Status again = (*rv)->barrier();
    EXPECT_FALSE(again.is_ok());
    EXPECT_NE(again.message().find("earlier rendezvous failure"), std::string::npos) << again.message();
  });
  EXPECT_NE(errors[0].find("rank 0: all_gather #1 with rank 2: connection closed"), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("rank 1: all_gather #1 with rank 0"), std::string::npos) << errors[1];
  EXPECT_NE(errors[1].find("rank 2"), std::string::npos) << "rank 1 learns which rank left: " << errors[1];
}

TEST(Rendezvous, RootThatLeavesEarlyIsAnErrorOnTheOthers) {
  const int port = free_port();
  std::string error;
  run_ranks(2, [&](int rank) {
    auto rv = Rendezvous::connect(env_for(rank, 2, port), std::chrono::seconds(30));
    ASSERT_TRUE(rv) << rv.status().message();
    if (rank == 0) return;
    Status s = (*rv)->barrier();
    ASSERT_FALSE(s.is_ok());
    error = s.message();
  });
  EXPECT_NE(error.find("rank 1: barrier #1 with rank 0 at 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("connection closed"), std::string::npos) << error;
}

TEST(Rendezvous, CollectivesInDifferentOrdersAreAnError) {
  const int port = free_port();
  std::vector<std::string> errors(2);
  run_ranks(2, [&](int rank) {
    auto rv = Rendezvous::connect(env_for(rank, 2, port), std::chrono::seconds(30));
    ASSERT_TRUE(rv) << rv.status().message();
    Status s = rank == 0 ? (*rv)->barrier() : (*rv)->all_gather("x").status();
    errors[static_cast<size_t>(rank)] = s.message();
  });
  EXPECT_NE(errors[0].find("rank 1 is at all_gather #1"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("same order"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("failed on rank 0"), std::string::npos) << errors[1];
}

TEST(Rendezvous, DisagreeingWorldSizesAreAnError) {
  const int port = free_port();
  std::vector<std::string> errors(2);
  run_ranks(2, [&](int rank) {
    auto rv = Rendezvous::connect(env_for(rank, rank == 0 ? 2 : 3, port), std::chrono::seconds(10));
    ASSERT_FALSE(rv);
    errors[static_cast<size_t>(rank)] = rv.status().message();
  });
  EXPECT_NE(errors[0].find("WORLD_SIZE=3, but rank 0 has WORLD_SIZE=2"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("WORLD_SIZE=3, but rank 0 has WORLD_SIZE=2"), std::string::npos) << errors[1];
}

TEST(Rendezvous, StrayConnectionsAreIgnored) {
  const int port = free_port();
  run_ranks(2, [&](int rank) {
    if (rank == 1) {
      // Something that is not a rank connects first and sends junk.
      std::this_thread::sleep_for(milliseconds(100));
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(port));
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
        const char junk[] = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
        (void)!::write(fd, junk, sizeof(junk) - 1);
      }
      std::this_thread::sleep_for(milliseconds(100));
      ::close(fd);
    }
    auto rv = Rendezvous::connect(env_for(rank, 2, port), std::chrono::seconds(20));
    ASSERT_TRUE(rv) << rv.status().message();
    EXPECT_TRUE((*rv)->barrier().is_ok());
  });
}

TEST(Rendezvous, RootReportsAPortInUse) {
  // Someone else already listens on the port.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  auto rv = Rendezvous::connect(env_for(0, 2, port), milliseconds(2000));
  ::close(fd);
  ASSERT_FALSE(rv);
  EXPECT_NE(rv.status().message().find("rank 0 could not listen on MASTER_PORT " + std::to_string(port)),
            std::string::npos)
      << rv.status().message();
}

}  // namespace
}  // namespace sl::dist
