#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cupti_tracer/capture_file.h"

namespace sl::cupti {
namespace {

// A capture of four kernels 1 ms apart; the profiler range holds the middle two.
std::string write_capture(bool with_t0) {
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("sl_window_" + std::to_string(with_t0) + "-" + std::to_string(::getpid()) + ".jsonl"))
          .string();
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

}  // namespace
}  // namespace sl::cupti
