#include "sim/device_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/common/test_support.h"

namespace sl::sim {
namespace {

std::string asset(const std::string& name) { return std::string(SL_SOURCE_DIR) + "/assets/devices/" + name + ".json"; }


TEST(DeviceModel, ShippedModelsLoadByName) {
  for (const char* name : {"h200", "h100", "a100"}) {
    Result<DeviceModel> m = load_device_model(name);
    ASSERT_TRUE(m.is_ok()) << name << ": " << m.status().message();
    EXPECT_EQ(m->name, name);
    EXPECT_GT(m->sm_count, 0);
    EXPECT_EQ(m->nccl_protocols.size(), 3u);
    EXPECT_EQ(m->gemm_efficiency.values.size(), 3u);
  }
  Result<DeviceModel> h200 = load_device_model("h200");
  EXPECT_EQ(h200->sm_count, 132);
  EXPECT_DOUBLE_EQ(h200->peak_bf16_tflops, 989);
  EXPECT_DOUBLE_EQ(h200->hbm_bandwidth_gbps, 4800);
  EXPECT_DOUBLE_EQ(h200->gemm_efficiency.lookup(1024, 24576, 24576), 0.82);
  Result<DeviceModel> a100 = load_device_model("a100");
  EXPECT_EQ(a100->sm_count, 108);
  EXPECT_DOUBLE_EQ(a100->peak_bf16_tflops, 312);
}

// A capture names its GPU as the driver does; a run of several names them with a count.
TEST(DeviceModel, TheStockFileOfAGpuName) {
  EXPECT_EQ(stock_device_for_gpu("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(stock_device_for_gpu("NVIDIA H200"), "h200");
  EXPECT_EQ(stock_device_for_gpu("NVIDIA H200 x2"), "h200");
  EXPECT_EQ(stock_device_for_gpu("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(stock_device_for_gpu("cuda"), "");
  EXPECT_EQ(stock_device_for_gpu("NVIDIA L4"), "");
  EXPECT_EQ(stock_device_for_gpu(""), "");
}

// Every stock file can cost a trace-driven run: the host and graph fields
// h200.json has are in the others too (h100.json lacked them, so its host
// issued every kernel for free).
TEST(DeviceModel, StockFilesHaveTheHostAndGraphCosts) {
  for (const char* name : {"h200", "h100", "a100"}) {
    Result<DeviceModel> m = load_device_model(name);
    ASSERT_TRUE(m.is_ok()) << name;
    EXPECT_GT(m->host_kernel_launch_us, 0) << name;
    EXPECT_GT(m->host_library_call_us, 0) << name;
    EXPECT_GT(m->host_graph_launch_us, 0) << name;
    EXPECT_GT(m->cublas_call_us, 0) << name;
    EXPECT_GT(m->graph_launch_us, 0) << name;
    EXPECT_LT(m->graph_node_gap_after_pdl_launch_us, 0) << name;
  }
}

TEST(DeviceModel, LoadsByPath) {
  Result<DeviceModel> m = load_device_model(asset("h100"));
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(m->name, "h100");
  EXPECT_EQ(m->file, asset("h100"));
}

TEST(DeviceModel, EnvironmentVariableComesFirst) {
  auto dir = std::filesystem::temp_directory_path() / ("sl_sim_assets_test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "devices");
  nlohmann::json j = nlohmann::json::parse(test_support::read_bytes(asset("h200")));
  j["name"] = "custom";
  j["sm_count"] = 100;
  std::ofstream(dir / "devices" / "custom.json") << j.dump();
  setenv("STREAMLENS_ASSETS", dir.c_str(), 1);
  Result<DeviceModel> m = load_device_model("custom");
  unsetenv("STREAMLENS_ASSETS");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(m->sm_count, 100);
  std::filesystem::remove_all(dir);
}

TEST(DeviceModel, UnknownNameListsWhereItLooked) {
  Result<DeviceModel> m = load_device_model("no-such-gpu");
  ASSERT_FALSE(m.is_ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(m.status().message().find("no-such-gpu.json"), std::string::npos) << m.status().message();
}

class BrokenModel : public ::testing::Test {
 protected:
  nlohmann::json base_ = nlohmann::json::parse(test_support::read_bytes(asset("h200")));
  std::string error(const nlohmann::json& j) {
    Result<DeviceModel> m = parse_device_model(j.dump(), "dev.json");
    EXPECT_FALSE(m.is_ok());
    return m.is_ok() ? std::string() : m.status().message();
  }
};

TEST_F(BrokenModel, MissingFieldNamesFileAndField) {
  base_.erase("hbm_bandwidth_gbps");
  EXPECT_EQ(error(base_), "dev.json: missing field 'hbm_bandwidth_gbps'");
}

TEST_F(BrokenModel, NumberWithoutSourceIsRejected) {
  base_.erase("peak_bf16_tflops_source");
  EXPECT_NE(error(base_).find("'peak_bf16_tflops' has no 'peak_bf16_tflops_source'"), std::string::npos);
}

TEST_F(BrokenModel, ACublasCallsRetracingDefaultsToAnyCommandsRecording) {
  // Device files written before the field cost a cuBLAS call traced again
  // as any command recorded again.
  base_.erase("host_graph_retrace_us");
  base_.erase("host_graph_retrace_us_source");
  base_["host_graph_rerecord_us"] = 1.7;
  Result<DeviceModel> m = parse_device_model(base_.dump(), "dev.json");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_DOUBLE_EQ(m->host_graph_retrace_us, 1.7);
  EXPECT_DOUBLE_EQ(graph_rerecord_us(*m, 5, 2), 5 * 1.7);
}

TEST_F(BrokenModel, WrongTypesAndRanges) {
  nlohmann::json j = base_;
  j["sm_count"] = "many";
  EXPECT_EQ(error(j), "dev.json: field 'sm_count' must be a number");
  j = base_;
  j["hbm_efficiency"] = 1.5;
  EXPECT_NE(error(j).find("'hbm_efficiency' must be in (0, 1]"), std::string::npos);
  j = base_;
  j["nccl_channels"] = 500;
  EXPECT_NE(error(j).find("nccl_channels (500) exceeds sm_count"), std::string::npos);
  j = base_;
  j["nccl_protocols"][1].erase("hop_latency_us");
  EXPECT_EQ(error(j), "dev.json: nccl_protocols[1]: missing field 'hop_latency_us'");
  j = base_;
  j["gemm_efficiency"]["values"][0].erase(0);
  EXPECT_NE(error(j).find("gemm_efficiency: 'values' must be a 3x3x3 list"), std::string::npos);
  EXPECT_EQ(parse_device_model("{not json", "x.json").status().message(), "x.json: not valid JSON");
}

TEST(GemmEfficiencyTable, BucketsByEdges) {
  GemmEfficiencyTable t;
  t.m_edges = {10};
  t.n_edges = {10};
  t.k_edges = {10};
  t.values = {{{0.1, 0.2}, {0.3, 0.4}}, {{0.5, 0.6}, {0.7, 0.8}}};
  EXPECT_DOUBLE_EQ(t.lookup(9, 9, 9), 0.1);
  EXPECT_DOUBLE_EQ(t.lookup(10, 9, 9), 0.5);
  EXPECT_DOUBLE_EQ(t.lookup(9, 10, 10), 0.4);
  EXPECT_DOUBLE_EQ(t.lookup(100, 100, 100), 0.8);
}

}  // namespace
}  // namespace sl::sim
