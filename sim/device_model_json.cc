#include "sim/device_model_json.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sl::sim {
namespace {

using nlohmann::ordered_json;

void collect_sources(const nlohmann::json& object, const std::string& prefix, DeviceSources* out) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (it->is_string() && key.size() > 7 && key.ends_with("_source")) {
      (*out)[prefix + key.substr(0, key.size() - 7)] = it->get<std::string>();
    }
  }
}

class Writer {
 public:
  Writer(const DeviceModel& model, const DeviceSources& sources) : model_(model), sources_(sources) {}

  template <typename T>
  void put(ordered_json& object, const std::string& prefix, const std::string& key, T value) {
    object[key] = value;
    object[key + "_source"] = source(prefix + key);
  }

  std::string source(const std::string& path) const {
    auto it = sources_.find(path);
    if (it != sources_.end() && !it->second.empty()) return it->second;
    return fmt::format("copied from the base model {}", model_.file.empty() ? model_.name : model_.file);
  }

 private:
  const DeviceModel& model_;
  const DeviceSources& sources_;
};

}  // namespace

DeviceSources read_device_sources(const std::string& path) {
  DeviceSources out;
  if (path.empty()) return out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json root = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!root.is_object()) return out;
  collect_sources(root, "", &out);
  if (auto t = root.find("gemm_efficiency"); t != root.end() && t->is_object()) {
    collect_sources(*t, "gemm_efficiency.", &out);
  }
  if (auto list = root.find("nccl_protocols"); list != root.end() && list->is_array()) {
    for (const nlohmann::json& p : *list) {
      if (!p.is_object() || !p.contains("name") || !p["name"].is_string()) continue;
      collect_sources(p, "nccl_protocols." + p["name"].get<std::string>() + ".", &out);
    }
  }
  return out;
}

std::string device_model_json(const DeviceModel& m, const DeviceSources& sources) {
  Writer w(m, sources);
  ordered_json root;
  root["name"] = m.name;
  root["description"] = m.description;
  w.put(root, "", "sm_count", m.sm_count);
  w.put(root, "", "clock_mhz", m.clock_mhz);
  w.put(root, "", "peak_bf16_tflops", m.peak_bf16_tflops);
  w.put(root, "", "peak_f16_tflops", m.peak_f16_tflops);
  w.put(root, "", "peak_tf32_tflops", m.peak_tf32_tflops);
  w.put(root, "", "peak_f32_tflops", m.peak_f32_tflops);
  w.put(root, "", "peak_fp8_tflops", m.peak_fp8_tflops);
  w.put(root, "", "hbm_bandwidth_gbps", m.hbm_bandwidth_gbps);
  w.put(root, "", "hbm_efficiency", m.hbm_efficiency);
  w.put(root, "", "kernel_compute_efficiency", m.kernel_compute_efficiency);
  w.put(root, "", "transcendental_tops", m.transcendental_tops);
  w.put(root, "", "nvlink_bandwidth_per_link_gbps", m.nvlink_bandwidth_per_link_gbps);
  w.put(root, "", "nvlink_links", m.nvlink_links);
  w.put(root, "", "nccl_bus_bandwidth_gbps", m.nccl_bus_bandwidth_gbps);
  w.put(root, "", "p2p_bandwidth_gbps", m.p2p_bandwidth_gbps);
  w.put(root, "", "all_gather_bandwidth_scale", m.all_gather_bandwidth_scale);
  w.put(root, "", "reduce_scatter_bandwidth_scale", m.reduce_scatter_bandwidth_scale);
  w.put(root, "", "all_reduce_bandwidth_scale", m.all_reduce_bandwidth_scale);
  w.put(root, "", "nccl_channels", m.nccl_channels);
  w.put(root, "", "kernel_launch_us", m.kernel_launch_us);
  w.put(root, "", "min_kernel_us", m.min_kernel_us);
  w.put(root, "", "cublas_call_us", m.cublas_call_us);
  w.put(root, "", "stream_kernel_gap_us", m.stream_kernel_gap_us);
  w.put(root, "", "graph_launch_us", m.graph_launch_us);
  w.put(root, "", "host_kernel_launch_us", m.host_kernel_launch_us);
  w.put(root, "", "host_library_call_us", m.host_library_call_us);
  w.put(root, "", "host_graph_launch_us", m.host_graph_launch_us);
  w.put(root, "", "host_graph_rerecord_us", m.host_graph_rerecord_us);
  w.put(root, "", "host_graph_retrace_us", m.host_graph_retrace_us);
  w.put(root, "", "host_graph_blas_command_us", m.host_graph_blas_command_us);
  w.put(root, "", "host_dynamic_slice_us", m.host_dynamic_slice_us);
  w.put(root, "", "host_sync_us", m.host_sync_us);
  w.put(root, "", "host_pace_fast_scale", m.host_pace_fast_scale);
  w.put(root, "", "host_pace_slow_scale", m.host_pace_slow_scale);
  w.put(root, "", "graph_node_gap_us", m.graph_node_gap_us);
  w.put(root, "", "graph_node_gap_after_pdl_launch_us", m.graph_node_gap_after_pdl_launch_us);
  w.put(root, "", "graph_node_gap_after_copy_us", m.graph_node_gap_after_copy_us);
  w.put(root, "", "graph_concurrency", m.graph_concurrency);
  w.put(root, "", "graph_cold_wait_per_node_us", m.graph_cold_wait_per_node_us);
  w.put(root, "", "graph_cold_wait_free_nodes", m.graph_cold_wait_free_nodes);
  w.put(root, "", "graph_cold_wait_max_us", m.graph_cold_wait_max_us);
  w.put(root, "", "gemm_wave_overhead_us", m.gemm_wave_overhead_us);
  w.put(root, "", "nccl_launch_us", m.nccl_launch_us);
  w.put(root, "", "contention_factor", m.contention_factor);
  w.put(root, "", "comm_rate_under_compute", m.comm_rate_under_compute);
  w.put(root, "", "concurrent_kernel_efficiency", m.concurrent_kernel_efficiency);
  w.put(root, "", "sm_limited_gemm_scale", m.sm_limited_gemm_scale);
  w.put(root, "", "comm_rate_beside_confined_gemm", m.comm_rate_beside_confined_gemm);
  for (hlo::Opcode op : {hlo::Opcode::kAllGather, hlo::Opcode::kReduceScatter, hlo::Opcode::kAllReduce}) {
    w.put(root, "", rate_beside_confined_gemm_key(op), comm_rate_beside_confined_gemm(m, op));
  }
  w.put(root, "", "copy_engine_bandwidth_scale", m.copy_engine_bandwidth_scale);
  w.put(root, "", "copy_kernel_bandwidth_scale", m.copy_kernel_bandwidth_scale);

  const GemmEfficiencyTable& t = m.gemm_efficiency;
  ordered_json table;
  w.put(table, "gemm_efficiency.", "tile_m", t.tile_m);
  w.put(table, "gemm_efficiency.", "tile_n", t.tile_n);
  if (t.split_k_min_k > 0) w.put(table, "gemm_efficiency.", "split_k_min_k", t.split_k_min_k);
  table["m_edges"] = t.m_edges;
  table["n_edges"] = t.n_edges;
  table["k_edges"] = t.k_edges;
  w.put(table, "gemm_efficiency.", "values", t.values);
  root["gemm_efficiency"] = std::move(table);

  ordered_json protocols = ordered_json::array();
  for (const NcclProtocol& p : m.nccl_protocols) {
    ordered_json proto;
    proto["name"] = p.name;
    std::string prefix = "nccl_protocols." + p.name + ".";
    w.put(proto, prefix, "base_latency_us", p.base_latency_us);
    w.put(proto, prefix, "hop_latency_us", p.hop_latency_us);
    w.put(proto, prefix, "bandwidth_fraction", p.bandwidth_fraction);
    w.put(proto, prefix, "all_reduce_bandwidth_fraction", p.all_reduce_bandwidth_fraction);
    protocols.push_back(std::move(proto));
  }
  root["nccl_protocols"] = std::move(protocols);
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Status write_device_model(const DeviceModel& model, const DeviceSources& sources, const std::string& path) {
  std::string text = device_model_json(model, sources);
  // Refuse to write what the loader would reject.
  auto check = parse_device_model(text, path);
  if (!check) return check.status();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return runtime_error(fmt::format("{}: cannot open for writing", path));
  out << text;
  out.close();
  if (!out) return runtime_error(fmt::format("{}: write failed", path));
  return ok_status();
}

}  // namespace sl::sim
