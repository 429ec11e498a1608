// A capture's device lines (capture_file.h): each GPU's name, which the
// imported run takes as its device model.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cupti_tracer/capture_file.h"
#include "tests/common/test_support.h"

namespace sl::cupti {
namespace {

// The captures this file writes, removed when the test program exits.
const test_support::ScratchDir kGpuNameScratch;

const std::filesystem::path kTorchOnH100 =
    std::filesystem::path(SL_SOURCE_DIR) / "tests/data/captures/torch_matmul_h100.jsonl";

std::string write_capture(const std::string& tag, const std::string& lines) {
  const std::string path = kGpuNameScratch.file("gpu_name_" + tag + ".jsonl");
  std::ofstream out(path);
  out << capture_meta_line(7, "prog", 1'000) << "\n";
  out << "{\"k\":\"kernel\",\"dev\":0,\"stream\":7,\"corr\":1,\"start\":5000,\"end\":6000,\"name\":\"k\"}\n";
  out << lines;
  return path;
}

int64_t bad_lines(const trace::Trace& t) {
  for (const trace::Counter& c : t.counters) {
    if (c.name == "capture_bad_lines") return c.value;
  }
  return 0;
}

// torch's 256x256 matmul captured by libstreamlens_inject.so on the device
// machine's H100 (2026-12-06): its cuBLAS kernels and the GPU's name.
TEST(CaptureGpuName, ARealCaptureNamesItsGpu) {
  auto t = import_capture_file(kTorchOnH100.string());
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->gpu_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(bad_lines(*t), 0);
  EXPECT_FALSE(t->events.empty());
}

TEST(CaptureGpuName, DevicesOfOneKindNameItOnceAndOthersEach) {
  auto same = import_capture_file(write_capture("same", capture_device_line(0, "NVIDIA H200") + "\n" +
                                                            capture_device_line(1, "NVIDIA H200") + "\n"));
  ASSERT_TRUE(same.is_ok()) << same.status().message();
  EXPECT_EQ(same->gpu_name, "NVIDIA H200");
  auto mixed = import_capture_file(write_capture("mixed", capture_device_line(0, "NVIDIA H200") + "\n" +
                                                              capture_device_line(1, "NVIDIA H100 80GB HBM3") + "\n"));
  ASSERT_TRUE(mixed.is_ok()) << mixed.status().message();
  EXPECT_EQ(mixed->gpu_name, "NVIDIA H200, NVIDIA H100 80GB HBM3");
}

// A capture made before the device lines names none; a device line without
// a name, with an empty one or a negative device is counted and left out.
TEST(CaptureGpuName, OldCapturesNameNoneAndBadLinesAreCounted) {
  auto old = import_capture_file(write_capture("old", ""));
  ASSERT_TRUE(old.is_ok()) << old.status().message();
  EXPECT_EQ(old->gpu_name, "");
  auto bad = import_capture_file(write_capture(
      "bad", "{\"k\":\"device\",\"dev\":0}\n{\"k\":\"device\",\"dev\":0,\"name\":\"\"}\n"
             "{\"k\":\"device\",\"dev\":-1,\"name\":\"x\"}\n"));
  ASSERT_TRUE(bad.is_ok()) << bad.status().message();
  EXPECT_EQ(bad->gpu_name, "");
  EXPECT_EQ(bad_lines(*bad), 3);
}

}  // namespace
}  // namespace sl::cupti
