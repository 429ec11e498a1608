// Device file numbers are checked against physical ranges before they size
// anything, and the engine refuses a makespan past int64 nanoseconds.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/device_model.h"
#include "sim/engine.h"
#include "tests/sim/sim_test_util.h"

namespace sl::sim {
namespace {

nlohmann::json device_json(const std::string& name) {
  std::ifstream in(std::string(SL_SOURCE_DIR) + "/assets/devices/" + name + ".json");
  return nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
}

nlohmann::json h200_json() { return device_json("h200"); }

std::string error_of(const nlohmann::json& j) {
  Result<DeviceModel> m = parse_device_model(j.dump(), "dev.json");
  EXPECT_FALSE(m.is_ok());
  return m.is_ok() ? std::string() : m.status().message();
}

TEST(DeviceModelRanges, ShippedFilesAreInRange) {
  for (const char* name : {"h200", "h100", "a100"}) {
    Result<DeviceModel> m = load_device_model(name);
    EXPECT_TRUE(m.is_ok()) << name << ": " << m.status().message();
  }
}

// h100.json and a100.json say which numbers are h200.json's (as is, or
// scaled by the NVLink ratio): they must be what h200.json holds now.
TEST(DeviceModelRanges, NumbersTakenFromH200MatchIt) {
  Result<DeviceModel> h200 = load_device_model("h200");
  Result<DeviceModel> h100 = load_device_model("h100");
  Result<DeviceModel> a100 = load_device_model("a100");
  ASSERT_TRUE(h200.is_ok() && h100.is_ok() && a100.is_ok());
  for (const DeviceModel* m : {&*h100, &*a100}) {
    EXPECT_DOUBLE_EQ(m->concurrent_kernel_efficiency, h200->concurrent_kernel_efficiency) << m->name;
    EXPECT_DOUBLE_EQ(m->contention_factor, h200->contention_factor) << m->name;
    EXPECT_DOUBLE_EQ(m->nccl_launch_us, h200->nccl_launch_us) << m->name;
    EXPECT_DOUBLE_EQ(m->min_kernel_us, h200->min_kernel_us) << m->name;
    EXPECT_DOUBLE_EQ(m->reduce_scatter_bandwidth_scale, h200->reduce_scatter_bandwidth_scale) << m->name;
    // The SFU rate: 16 a clock per SM.
    EXPECT_NEAR(m->transcendental_tops, m->sm_count * 16 * m->clock_mhz * 1e-6, 0.01) << m->name;
  }
  EXPECT_DOUBLE_EQ(h100->nccl_bus_bandwidth_gbps, h200->nccl_bus_bandwidth_gbps);
  EXPECT_DOUBLE_EQ(h100->p2p_bandwidth_gbps, h200->p2p_bandwidth_gbps);
  EXPECT_NEAR(a100->nccl_bus_bandwidth_gbps, h200->nccl_bus_bandwidth_gbps * 600 / 900, 0.1);
  EXPECT_NEAR(a100->p2p_bandwidth_gbps, h200->p2p_bandwidth_gbps * 600 / 900, 0.1);
}

// The numbers of `theirs` (a device file, or an object in one such as
// gemm_efficiency) whose source says it takes them from h200.json's `h200`
// (its source reads "h200.json value, unscaled: ..." or "... scaled by the
// NVLink bandwidth ratio ... 2/3: ...") must be h200.json's current number,
// as is or times 600/900, and must quote h200.json's current source. Returns
// how many there were; `where` names them in failures.
int check_borrowed(const nlohmann::json& theirs, const nlohmann::json& h200, const std::string& where) {
  int borrowed = 0;
  for (const auto& [key, value] : theirs.items()) {
    if (value.is_object() && h200.contains(key) && h200[key].is_object()) {
      borrowed += check_borrowed(value, h200[key], where + "." + key);
      continue;
    }
    const std::string suffix = "_source";
    if (!value.is_string() || key.size() <= suffix.size() || !key.ends_with(suffix)) continue;
    const std::string& source = value.get_ref<const std::string&>();
    const size_t at = source.find("h200.json value");
    if (at == std::string::npos) continue;
    ++borrowed;
    const std::string field = key.substr(0, key.size() - suffix.size());
    if (!h200.contains(key) || !h200.contains(field)) {
      ADD_FAILURE() << where << "." << field << " is not in h200.json";
      continue;
    }
    EXPECT_NE(source.find(h200[key].get<std::string>()), std::string::npos)
        << where << "." << key << " does not quote h200.json's current source";
    const double their_value = theirs[field].get<double>(), h200_value = h200[field].get<double>();
    const std::string how = source.substr(at, source.find(": ", at) - at);
    if (how.find("unscaled") != std::string::npos) {
      EXPECT_DOUBLE_EQ(their_value, h200_value) << where << "." << field;
    } else if (how.find("2/3") != std::string::npos) {
      EXPECT_NEAR(their_value, h200_value * 600 / 900, 0.05) << where << "." << field;
    } else {
      ADD_FAILURE() << where << "." << key << ": neither unscaled nor the NVLink ratio: " << how;
    }
  }
  return borrowed;
}

// Re-measuring the H200 fails here until the numbers h100.json and
// a100.json borrow from it follow, nested ones (gemm_efficiency) included.
TEST(DeviceModelRanges, BorrowedNumbersAndSourcesAreH200sCurrentOnes) {
  const nlohmann::json h200 = device_json("h200");
  for (const char* name : {"h100", "a100"}) {
    EXPECT_GE(check_borrowed(device_json(name), h200, name), 10) << name;
  }
  // split_k_min_k sits inside gemm_efficiency.
  const nlohmann::json h100_gemms = device_json("h100")["gemm_efficiency"];
  EXPECT_EQ(check_borrowed(h100_gemms, h200["gemm_efficiency"], "h100.gemm_efficiency"), 1);
}

TEST(DeviceModelRanges, AbsurdLaunchAndBandwidthAreRejected) {
  nlohmann::json j = h200_json();
  j["kernel_launch_us"] = 1e300;
  EXPECT_NE(error_of(j).find("field 'kernel_launch_us' = 1e+300 is outside the physical range"), std::string::npos)
      << error_of(j);
  j = h200_json();
  j["hbm_bandwidth_gbps"] = 1e-300;
  EXPECT_NE(error_of(j).find("'hbm_bandwidth_gbps'"), std::string::npos);
  EXPECT_NE(error_of(j).find("1 GB/s to 100 TB/s"), std::string::npos) << error_of(j);
  j = h200_json();
  j["nccl_bus_bandwidth_gbps"] = 2e5;
  EXPECT_NE(error_of(j).find("'nccl_bus_bandwidth_gbps'"), std::string::npos);
  j = h200_json();
  j["nccl_protocols"][0]["base_latency_us"] = 5e6;
  EXPECT_NE(error_of(j).find("nccl_protocols[0]: field 'base_latency_us'"), std::string::npos) << error_of(j);
}

TEST(DeviceModelRanges, CountsAndScalesAreChecked) {
  nlohmann::json j = h200_json();
  j["sm_count"] = 1e300;  // would overflow the int it sizes
  EXPECT_NE(error_of(j).find("'sm_count'"), std::string::npos);
  j = h200_json();
  j["nvlink_links"] = 2.5;
  EXPECT_NE(error_of(j).find("'nvlink_links' must be an integer"), std::string::npos);
  j = h200_json();
  j["gemm_efficiency"]["tile_m"] = 0;
  EXPECT_NE(error_of(j).find("tile_m"), std::string::npos);
  j = h200_json();
  j["contention_factor"] = 20;  // 16 channels of 132 SMs, times 20: more than the device
  EXPECT_NE(error_of(j).find("exceeds 1"), std::string::npos) << error_of(j);
  j = h200_json();
  j["transcendental_tops"] = -1;
  EXPECT_NE(error_of(j).find("'transcendental_tops'"), std::string::npos);
}

TEST(DeviceModelRanges, MakespanPastInt64IsAnError) {
  DeviceModel m = testing::simple_model();  // built in code: no file checks
  m.hbm_bandwidth_gbps = 0.1;               // 0.1 byte/ns
  sched::DeviceProgram p;
  p.thunks.push_back(testing::mem_kernel(0, int64_t{2} << 60));  // 2.3e18 bytes: 2.3e19 ns
  Result<trace::Trace> t = simulate({p}, m);
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("passes"), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("int64"), std::string::npos);

  m.hbm_bandwidth_gbps = 1e-300;  // infinite time, not a negative or wrapped one
  p.thunks[0] = testing::mem_kernel(0, 1000);
  t = simulate({p}, m);
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("int64"), std::string::npos);
}

}  // namespace
}  // namespace sl::sim
