#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "cupti_tracer/capture_file.h"
#include "tests/common/test_support.h"

namespace sl::cupti {
namespace {

// The captures this file writes, removed when the test program exits.
const test_support::ScratchDir kWindowScratch;

// A capture of four kernels 1 ms apart; the profiler range holds the middle two.
std::string write_capture(bool with_t0) {
  const std::string path = kWindowScratch.file("window_" + std::to_string(with_t0) + ".jsonl");
  std::ofstream out(path);
  const uint64_t t0 = 1'000'000'000;
  out << capture_meta_line(7, "prog", with_t0 ? t0 : 0) << "\n";
  out << capture_range_line(true, t0 + 1'500'000) << "\n";
  out << capture_range_line(false, t0 + 3'500'000) << "\n";
  for (int i = 0; i < 4; ++i) {
    const uint64_t start = t0 + 1'000'000 * static_cast<uint64_t>(i + 1);
    out << "{\"k\":\"kernel\",\"dev\":0,\"stream\":7,\"corr\":" << i + 1 << ",\"start\":" << start
        << ",\"end\":" << start + 1000 << ",\"name\":\"k" << i << "\"}\n";
  }
  return path;
}

std::vector<std::string> names(const trace::Trace& t) {
  std::vector<std::string> out;
  for (const trace::Event& e : t.events) out.push_back(t.name_of(e));
  return out;
}

TEST(CaptureWindow, KeepsEverythingByDefault) {
  auto t = import_capture_file(write_capture(true));
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(names(*t), (std::vector<std::string>{"k0", "k1", "k2", "k3"}));
}

TEST(CaptureWindow, ProfilerRangesKeepWhatRanBetweenStartAndStop) {
  auto t = import_capture_file(write_capture(true), CaptureWindow{.profiler_ranges = true});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(names(*t), (std::vector<std::string>{"k1", "k2"}));
  bool counted = false;
  for (const trace::Counter& c : t->counters) counted = counted || (c.name == "capture_records_outside_window" && c.value == 2);
  EXPECT_TRUE(counted);
}

TEST(CaptureWindow, DelayAndDurationCountFromTheStart) {
  auto t = import_capture_file(write_capture(true), CaptureWindow{.delay_ns = 1'500'000, .duration_ns = 2'000'000});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(names(*t), (std::vector<std::string>{"k1", "k2"}));
  auto late = import_capture_file(write_capture(true), CaptureWindow{.delay_ns = 3'500'000});
  ASSERT_TRUE(late.is_ok());
  EXPECT_EQ(names(*late), (std::vector<std::string>{"k3"}));
}

TEST(CaptureWindow, ADelayWithoutAStartTimeIsAnError) {
  auto t = import_capture_file(write_capture(false), CaptureWindow{.delay_ns = 1});
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("t0"), std::string::npos);
}

// A range per training step: each record is kept by the range it starts in
// (found by bisection), whatever the number of ranges.
TEST(CaptureWindow, ManyRangesKeepWhatRanInsideEach) {
  const std::string path = kWindowScratch.file("ranges.jsonl");
  std::ofstream out(path);
  out << capture_meta_line(7, "prog", 1000) << "\n";
  for (uint64_t step = 0; step < 1000; ++step) {
    out << capture_range_line(true, 1'000'000 + step * 100) << "\n";
    out << capture_range_line(false, 1'000'000 + step * 100 + 50) << "\n";
  }
  // One kernel inside each of steps 0, 500 and 999's range, one between 500's and 501's.
  for (uint64_t start : {1'000'010ull, 1'050'020ull, 1'099'949ull, 1'050'060ull}) {
    out << "{\"k\":\"kernel\",\"dev\":0,\"stream\":7,\"corr\":1,\"start\":" << start << ",\"end\":" << start + 1
        << ",\"name\":\"k" << start << "\"}\n";
  }
  out.close();
  auto t = import_capture_file(path, CaptureWindow{.profiler_ranges = true});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(names(*t), (std::vector<std::string>{"k1000010", "k1050020", "k1099949"}));
}

// Damage is bounded: a line past kMaxCaptureLineBytes counts as bad and the
// records after it are read; a device node is refused, not read forever.
TEST(CaptureWindow, AnOverlongLineIsBadAndADeviceIsRefused) {
  const std::string path = kWindowScratch.file("long.jsonl");
  std::ofstream out(path);
  out << std::string(kMaxCaptureLineBytes + 10, 'a') << "\n";
  out << "{\"k\":\"kernel\",\"dev\":0,\"stream\":7,\"corr\":1,\"start\":5,\"end\":9,\"name\":\"after\"}\n";
  out.close();
  auto t = import_capture_file(path);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(names(*t), (std::vector<std::string>{"after"}));
  int64_t bad = 0;
  for (const trace::Counter& c : t->counters) bad += c.name == "capture_bad_lines" ? c.value : 0;
  EXPECT_EQ(bad, 1);
  auto device = import_capture_file("/dev/zero");
  ASSERT_FALSE(device.is_ok());
  EXPECT_NE(device.status().message().find("not a regular file"), std::string::npos) << device.status().message();
}

}  // namespace
}  // namespace sl::cupti
