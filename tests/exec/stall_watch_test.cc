// StallWatch fires once when progress stops for its timeout, and never while
// progress goes on. Times are short but the checks have no upper bound on
// how long anything takes, so a slow machine cannot fail them.

#include "core/exec/stall_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace sl::exec {
namespace {

using std::chrono::milliseconds;

void wait_until(const std::atomic<int>& calls, int at_least) {
  while (calls.load() < at_least) std::this_thread::sleep_for(milliseconds(1));
}

TEST(StallWatch, FiresOnceWhenProgressStops) {
  std::atomic<int> fired{0};
  std::atomic<int> polls{0};
  StallWatch watch(
      milliseconds(30),
      [&] {
        ++polls;
        return int64_t{7};
      },
      [&] { ++fired; }, milliseconds(5));
  wait_until(fired, 1);
  const int polls_at_fire = polls.load();
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(fired.load(), 1);
  EXPECT_TRUE(watch.fired());
  EXPECT_EQ(polls.load(), polls_at_fire) << "the watch stops after firing";
}

// Progress every poll: the watch outlives many timeouts without firing.
TEST(StallWatch, NeverFiresWhileProgressGoesOn) {
  std::atomic<int> fired{0};
  std::atomic<int> polls{0};
  {
    StallWatch watch(
        milliseconds(20), [&] { return int64_t{++polls}; }, [&] { ++fired; }, milliseconds(2));
    // At least ten timeouts' worth of polls (each poll waits 2 ms at least).
    wait_until(polls, 100);
    EXPECT_FALSE(watch.fired());
  }
  EXPECT_EQ(fired.load(), 0);
}

// The timeout counts from the last progress, not from the start: progress
// for longer than the timeout, then none, fires only a timeout after it stopped.
TEST(StallWatch, CountsTheTimeoutFromTheLastProgress) {
  using Clock = std::chrono::steady_clock;
  constexpr int kProgressPolls = 50;  // at least 100 ms at a poll of 2 ms: over three timeouts
  std::atomic<int> fired{0};
  std::atomic<int> polls{0};
  Clock::time_point last_change{}, fired_at{};
  int polls_at_fire = 0;
  StallWatch watch(
      milliseconds(30),
      [&] {
        const int p = ++polls;
        if (p > kProgressPolls) return int64_t{kProgressPolls};
        last_change = Clock::now();
        return int64_t{p};
      },
      [&] {
        fired_at = Clock::now();
        polls_at_fire = polls.load();
        ++fired;
      },
      milliseconds(2));
  wait_until(fired, 1);
  EXPECT_GT(polls_at_fire, kProgressPolls) << "fired while progress went on";
  EXPECT_GE(fired_at - last_change, milliseconds(30));
}

TEST(StallWatch, StopsPromptlyWhenDestroyed) {
  std::atomic<int> fired{0};
  // A timeout and poll of an hour, far past the test's timeout
  // (tests/CMakeLists.txt): a destructor that waited them out fails it.
  {
    StallWatch watch(
        milliseconds(3600000), [] { return int64_t{0}; }, [&] { ++fired; }, milliseconds(3600000));
  }
  EXPECT_EQ(fired.load(), 0);
}

}  // namespace
}  // namespace sl::exec
