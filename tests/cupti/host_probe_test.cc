#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/trace/host_probe.h"
#include "cupti_tracer/capture_file.h"
#include "cupti_tracer/host_pace.h"
#include "tests/common/test_support.h"

namespace sl::cupti {
namespace {

// The captures this file writes, removed when the test program exits.
const test_support::ScratchDir kHostProbeScratch;

// A capture of one kernel with the host lines a capture of today writes,
// plus `extra` lines.
std::string write_probed_capture(const std::string& tag, const std::string& extra) {
  const std::string path = kHostProbeScratch.file("host_probe_" + tag + ".jsonl");
  std::ofstream out(path);
  out << capture_meta_line(7, "prog", 1'000) << "\n";
  out << capture_host_line("start", 1'100'000, 1'000) << "\n";
  out << "{\"k\":\"kernel\",\"dev\":0,\"stream\":7,\"corr\":1,\"start\":5000,\"end\":6000,\"name\":\"k\"}\n";
  out << capture_host_line("end", 2'300'000, 9'000) << "\n";
  out << extra;
  return path;
}

int64_t counter_or_zero(const trace::Trace& t, std::string_view name) {
  for (const trace::Counter& c : t.counters) {
    if (c.name == name) return c.value;
  }
  return 0;
}

TEST(HostProbe, TheProbeTimesItsWorkload) {
  const int64_t once = host_probe_ns(1);
  const int64_t best_of_three = host_probe_ns(3);
  EXPECT_GT(once, 0);
  EXPECT_GT(best_of_three, 0);
  // About a millisecond on a fast core: far from nothing, and from a second.
  EXPECT_GT(best_of_three, 10'000);
  EXPECT_LT(best_of_three, 1'000'000'000);
}

TEST(HostProbe, TheCapturesProbesBecomeTheRunsCounters) {
  auto t = import_capture_file(write_probed_capture("ok", ""));
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->events.size(), 1u);
  const trace::HostProbe host = trace::host_probe_of(*t);
  EXPECT_TRUE(host.measured());
  EXPECT_EQ(host.start_ns, 1'100'000);
  EXPECT_EQ(host.end_ns, 2'300'000);
  EXPECT_EQ(counter_or_zero(*t, "capture_bad_lines"), 0);
}

TEST(HostProbe, AMalformedHostLineIsCountedAndLeftOut) {
  // A probe at neither end, a probe of no time, and one without its value.
  auto t = import_capture_file(write_probed_capture(
      "bad", "{\"k\":\"host\",\"at\":\"middle\",\"probe_ns\":5,\"t\":1}\n"
             "{\"k\":\"host\",\"at\":\"end\",\"probe_ns\":0,\"t\":1}\n{\"k\":\"host\",\"at\":\"end\"}\n"));
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(counter_or_zero(*t, "capture_bad_lines"), 3);
  EXPECT_EQ(trace::host_probe_of(*t).end_ns, 2'300'000);
}

TEST(HostProbe, ACaptureWithoutProbesHasNoHostCounters) {
  std::istringstream in("{\"k\":\"kernel\",\"dev\":0,\"stream\":7,\"start\":1,\"end\":2,\"name\":\"k\"}\n");
  struct Ignore : ActivitySink {
    void on_activity(const Activity&) override {}
    void on_dropped(uint64_t) override {}
    void on_unknown_kind(uint32_t) override {}
  } ignore;
  CaptureHost host;
  int64_t bad = -1;
  ASSERT_TRUE(read_capture(in, ignore, &bad, &host).is_ok());
  EXPECT_EQ(bad, 0);
  EXPECT_FALSE(host.probe_start_ns.has_value());
  EXPECT_FALSE(host.probe_end_ns.has_value());
}

}  // namespace
}  // namespace sl::cupti
