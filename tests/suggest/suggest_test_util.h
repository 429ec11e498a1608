#pragma once
// Samples loaded for the suggest tests, and the simulator evaluator on H200.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"
#include "sim/device_model.h"

namespace sl::suggest_test {

inline std::string sample_path(const std::string& name) {
  return (std::filesystem::path(SL_SOURCE_DIR) / "samples" / name).string();
}

// Every .hlo in samples/ (or samples/small/), sorted.
inline std::vector<std::string> sample_names(const std::string& folder = "") {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(SL_SOURCE_DIR) / "samples" / folder)) {
    if (entry.path().extension() == ".hlo") out.push_back((folder.empty() ? "" : folder + "/") + entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline hlo::Module load(const std::string& name) {
  Result<hlo::Module> module = hlo::parse_program_file(sample_path(name));
  EXPECT_TRUE(module.is_ok()) << module.status().message();
  if (!module) return {};
  Status verified = hlo::verify_status(*module);
  EXPECT_TRUE(verified.is_ok()) << verified.message();
  return std::move(module).value();
}

inline const sim::DeviceModel& h200() {
  static const sim::DeviceModel model = [] {
    Result<sim::DeviceModel> m = sim::load_device_model("h200");
    EXPECT_TRUE(m.is_ok()) << m.status().message();
    return m.is_ok() ? *m : sim::DeviceModel{};
  }();
  return model;
}

}  // namespace sl::suggest_test
