#include "sim/device_model.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sl::sim {
namespace {

using nlohmann::json;

// The physical range a number of a device file must lie in before it sizes
// anything: wide enough for any GPU, narrow enough that no product or sum
// of them overflows a double or an int64 of nanoseconds.
struct Range {
  double lo, hi;
  const char* what;
};
constexpr Range kCount{1, 1 << 16, "a count"};
constexpr Range kSms{1, 4096, "an SM count"};
constexpr Range kClockMhz{100, 10000, "a clock in MHz"};
constexpr Range kTflops{1e-3, 1e5, "a rate in TFLOP/s"};
constexpr Range kTopsOrZero{0, 1e5, "a rate in 1e12 operations/s (0: derived)"};
constexpr Range kBandwidth{1, 1e5, "a bandwidth in GB/s (1 GB/s to 100 TB/s)"};
constexpr Range kMicroseconds{0, 1e6, "a time in us (0 to 1 s)"};
constexpr Range kSignedGap{-10, 1e6, "a time in us (-10 to 1 s; negative: overlap)"};
constexpr Range kScale{1e-3, 1e3, "a relative scale"};
constexpr Range kTile{1, 4096, "a CTA tile size"};
constexpr Range kSplitK{1, 1 << 20, "a GEMM's K extent"};

// Reads fields of one JSON object and remembers the first error, so the
// loader can read everything in a straight line and report once.
class FieldReader {
 public:
  FieldReader(const json& object, std::string file, std::string where)
      : object_(object), file_(std::move(file)), where_(std::move(where)) {}

  // A positive number with a non-empty sibling "<key>_source" (any sign
  // with `allow_negative`: an overlap).
  double number(const std::string& key, bool allow_zero = false, bool allow_negative = false) {
    if (!error_.empty()) return 0;
    auto it = object_.find(key);
    if (it == object_.end()) return fail(fmt::format("missing field '{}'", key));
    if (!it->is_number()) return fail(fmt::format("field '{}' must be a number", key));
    double value = it->get<double>();
    if (!std::isfinite(value)) return fail(fmt::format("field '{}' must be a finite number", key));
    if (!allow_negative && (value < 0 || (!allow_zero && value == 0))) {
      return fail(fmt::format("field '{}' must be {} (got {})", key, allow_zero ? ">= 0" : "> 0", value));
    }
    auto source = object_.find(key + "_source");
    if (source == object_.end() || !source->is_string() || source->get<std::string>().empty()) {
      return fail(fmt::format("field '{}' has no '{}_source' saying where the number comes from", key, key));
    }
    return value;
  }

  // number(key) within the physical range of its quantity.
  double number(const std::string& key, const Range& range) {
    double value = number(key, range.lo <= 0, range.lo < 0);
    if (error_.empty() && (value < range.lo || value > range.hi)) {
      return fail(fmt::format("field '{}' = {} is outside the physical range of {}, [{}, {}]", key, value, range.what,
                              range.lo, range.hi));
    }
    return value;
  }

  // number(key, range) when the file has the key, `absent` otherwise.
  double optional_number(const std::string& key, double absent, const Range& range) {
    return object_.contains(key) ? number(key, range) : absent;
  }

  double fraction(const std::string& key) {
    double value = number(key);
    if (error_.empty() && value > 1) return fail(fmt::format("field '{}' must be in (0, 1] (got {})", key, value));
    return value;
  }

  int integer(const std::string& key, const Range& range) {
    double value = number(key, range);  // in range first: the cast below is then defined
    if (error_.empty() && value != std::floor(value)) {
      return static_cast<int>(fail(fmt::format("field '{}' must be an integer (got {})", key, value)));
    }
    return static_cast<int>(value);
  }

  std::string string(const std::string& key) {
    if (!error_.empty()) return {};
    auto it = object_.find(key);
    if (it == object_.end()) return fail(fmt::format("missing field '{}'", key)), std::string();
    if (!it->is_string()) return fail(fmt::format("field '{}' must be a string", key)), std::string();
    return it->get<std::string>();
  }

  const json* child(const std::string& key, json::value_t type) {
    if (!error_.empty()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end()) return fail(fmt::format("missing field '{}'", key)), nullptr;
    if (it->type() != type) {
      return fail(fmt::format("field '{}' must be {}", key, type == json::value_t::array ? "a list" : "an object")),
             nullptr;
    }
    return &*it;
  }

  double fail(const std::string& message) {
    if (error_.empty()) error_ = fmt::format("{}: {}{}", file_, where_, message);
    return 0;
  }
  const std::string& error() const { return error_; }
  void adopt(const FieldReader& inner) {
    if (error_.empty()) error_ = inner.error_;
  }

 private:
  const json& object_;
  std::string file_;
  std::string where_;
  std::string error_;
};

std::vector<int64_t> read_edges(FieldReader& reader, const json& table, const std::string& key) {
  std::vector<int64_t> edges;
  auto it = table.find(key);
  if (it == table.end() || !it->is_array()) {
    reader.fail(fmt::format("gemm_efficiency: missing list '{}'", key));
    return edges;
  }
  for (const json& e : *it) {
    if (!e.is_number_integer() || e.get<int64_t>() <= 0 || (!edges.empty() && e.get<int64_t>() <= edges.back())) {
      reader.fail(fmt::format("gemm_efficiency: '{}' must be increasing positive integers", key));
      return edges;
    }
    edges.push_back(e.get<int64_t>());
  }
  return edges;
}

void read_gemm_table(FieldReader& reader, const std::string& file, GemmEfficiencyTable* table) {
  const json* t = reader.child("gemm_efficiency", json::value_t::object);
  if (!t) return;
  FieldReader inner(*t, file, "gemm_efficiency: ");
  table->tile_m = inner.integer("tile_m", kTile);
  table->tile_n = inner.integer("tile_n", kTile);
  table->split_k_min_k = static_cast<int64_t>(inner.optional_number("split_k_min_k", 0, kSplitK));
  reader.adopt(inner);
  if (!reader.error().empty()) return;
  table->m_edges = read_edges(reader, *t, "m_edges");
  table->n_edges = read_edges(reader, *t, "n_edges");
  table->k_edges = read_edges(reader, *t, "k_edges");
  if (!reader.error().empty()) return;
  auto source = t->find("values_source");
  if (source == t->end() || !source->is_string() || source->get<std::string>().empty()) {
    reader.fail("gemm_efficiency: 'values' has no 'values_source'");
    return;
  }
  auto values = t->find("values");
  const size_t nm = table->m_edges.size() + 1, nn = table->n_edges.size() + 1, nk = table->k_edges.size() + 1;
  auto shape_error = [&] {
    reader.fail(fmt::format("gemm_efficiency: 'values' must be a {}x{}x{} list of numbers in (0, 1]", nm, nn, nk));
  };
  if (values == t->end() || !values->is_array() || values->size() != nm) return shape_error();
  for (const json& plane : *values) {
    if (!plane.is_array() || plane.size() != nn) return shape_error();
    auto& out_plane = table->values.emplace_back();
    for (const json& row : plane) {
      if (!row.is_array() || row.size() != nk) return shape_error();
      auto& out_row = out_plane.emplace_back();
      for (const json& v : row) {
        if (!v.is_number() || v.get<double>() <= 0 || v.get<double>() > 1) return shape_error();
        out_row.push_back(v.get<double>());
      }
    }
  }
}

void read_protocols(FieldReader& reader, const std::string& file, std::vector<NcclProtocol>* out) {
  const json* list = reader.child("nccl_protocols", json::value_t::array);
  if (!list) return;
  if (list->empty()) {
    reader.fail("'nccl_protocols' is empty");
    return;
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const json& p = (*list)[i];
    if (!p.is_object()) {
      reader.fail(fmt::format("nccl_protocols[{}] must be an object", i));
      return;
    }
    FieldReader inner(p, file, fmt::format("nccl_protocols[{}]: ", i));
    NcclProtocol proto;
    proto.name = inner.string("name");
    proto.base_latency_us = inner.number("base_latency_us", kMicroseconds);
    proto.hop_latency_us = inner.number("hop_latency_us", kMicroseconds);
    proto.bandwidth_fraction = inner.fraction("bandwidth_fraction");
    proto.all_reduce_bandwidth_fraction = inner.fraction("all_reduce_bandwidth_fraction");
    reader.adopt(inner);
    out->push_back(std::move(proto));
  }
}

std::string executable_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path().string();
}

}  // namespace

double GemmEfficiencyTable::lookup(int64_t m, int64_t n, int64_t k) const {
  auto bucket = [](const std::vector<int64_t>& edges, int64_t v) {
    return static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin());
  };
  if (values.empty()) return 1.0;
  return values[bucket(m_edges, m)][bucket(n_edges, n)][bucket(k_edges, k)];
}

Result<DeviceModel> parse_device_model(const std::string& json_text, const std::string& file_name) {
  json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return invalid_input(fmt::format("{}: not valid JSON", file_name));
  if (!root.is_object()) return invalid_input(fmt::format("{}: the device file must be a JSON object", file_name));

  DeviceModel m;
  m.file = file_name;
  FieldReader r(root, file_name, "");
  m.name = r.string("name");
  m.description = r.string("description");
  m.sm_count = r.integer("sm_count", kSms);
  m.clock_mhz = r.number("clock_mhz", kClockMhz);
  m.peak_bf16_tflops = r.number("peak_bf16_tflops", kTflops);
  m.peak_f16_tflops = r.number("peak_f16_tflops", kTflops);
  m.peak_tf32_tflops = r.number("peak_tf32_tflops", kTflops);
  m.peak_f32_tflops = r.number("peak_f32_tflops", kTflops);
  m.peak_fp8_tflops = r.optional_number("peak_fp8_tflops", 0, kTopsOrZero);
  m.hbm_bandwidth_gbps = r.number("hbm_bandwidth_gbps", kBandwidth);
  m.hbm_efficiency = r.fraction("hbm_efficiency");
  m.kernel_compute_efficiency = r.fraction("kernel_compute_efficiency");
  m.transcendental_tops = r.optional_number("transcendental_tops", 0, kTopsOrZero);
  m.nvlink_bandwidth_per_link_gbps = r.number("nvlink_bandwidth_per_link_gbps", kBandwidth);
  m.nvlink_links = r.integer("nvlink_links", kCount);
  m.nccl_bus_bandwidth_gbps = r.number("nccl_bus_bandwidth_gbps", kBandwidth);
  m.p2p_bandwidth_gbps = r.number("p2p_bandwidth_gbps", kBandwidth);
  m.all_gather_bandwidth_scale = r.optional_number("all_gather_bandwidth_scale", 1, kScale);
  m.reduce_scatter_bandwidth_scale = r.optional_number("reduce_scatter_bandwidth_scale", 1, kScale);
  m.all_reduce_bandwidth_scale = r.optional_number("all_reduce_bandwidth_scale", 1, kScale);
  m.sm_limited_gemm_scale = r.optional_number("sm_limited_gemm_scale", 1, kScale);
  m.comm_rate_beside_confined_gemm = r.optional_number("comm_rate_beside_confined_gemm", 1, kScale);
  for (hlo::Opcode op : {hlo::Opcode::kAllGather, hlo::Opcode::kReduceScatter, hlo::Opcode::kAllReduce}) {
    *rate_beside_confined_gemm(m, op) =
        r.optional_number(rate_beside_confined_gemm_key(op), m.comm_rate_beside_confined_gemm, kScale);
  }
  m.copy_engine_bandwidth_scale = r.optional_number("copy_engine_bandwidth_scale", 1, kScale);
  m.copy_kernel_bandwidth_scale = r.optional_number("copy_kernel_bandwidth_scale", 1, kScale);
  m.nccl_channels = r.integer("nccl_channels", kSms);
  m.kernel_launch_us = r.number("kernel_launch_us", kMicroseconds);
  m.min_kernel_us = r.optional_number("min_kernel_us", 0, kMicroseconds);
  m.cublas_call_us = r.optional_number("cublas_call_us", 0, kMicroseconds);
  m.stream_kernel_gap_us = r.optional_number("stream_kernel_gap_us", m.kernel_launch_us, kMicroseconds);
  m.graph_launch_us = r.optional_number("graph_launch_us", m.kernel_launch_us, kMicroseconds);
  m.host_kernel_launch_us = r.optional_number("host_kernel_launch_us", 0, kMicroseconds);
  m.host_library_call_us = r.optional_number("host_library_call_us", m.host_kernel_launch_us, kMicroseconds);
  m.host_graph_launch_us = r.optional_number("host_graph_launch_us", m.host_kernel_launch_us, kMicroseconds);
  m.host_graph_rerecord_us = r.optional_number("host_graph_rerecord_us", 0, kMicroseconds);
  m.host_graph_retrace_us =
      r.optional_number("host_graph_retrace_us", m.host_graph_rerecord_us, kMicroseconds);
  m.host_graph_blas_command_us = r.optional_number("host_graph_blas_command_us", 0.0, kMicroseconds);
  m.host_dynamic_slice_us = r.optional_number("host_dynamic_slice_us", m.host_kernel_launch_us, kMicroseconds);
  m.host_sync_us = r.optional_number("host_sync_us", 0, kMicroseconds);
  m.host_pace_fast_scale = r.optional_number("host_pace_fast_scale", 1, kScale);
  m.host_pace_slow_scale = r.optional_number("host_pace_slow_scale", 1, kScale);
  m.graph_node_gap_us = r.optional_number("graph_node_gap_us", m.kernel_launch_us, kSignedGap);
  m.graph_node_gap_after_pdl_launch_us =
      r.optional_number("graph_node_gap_after_pdl_launch_us", m.graph_node_gap_us, kSignedGap);
  m.graph_node_gap_after_copy_us =
      r.optional_number("graph_node_gap_after_copy_us", m.graph_node_gap_us, kSignedGap);
  m.graph_concurrency = static_cast<int>(r.optional_number("graph_concurrency", 1, kCount));
  m.graph_cold_wait_per_node_us = r.optional_number("graph_cold_wait_per_node_us", 0, kMicroseconds);
  m.graph_cold_wait_free_nodes = static_cast<int>(r.optional_number("graph_cold_wait_free_nodes", 0, kCount));
  m.graph_cold_wait_max_us = r.optional_number("graph_cold_wait_max_us", 0, kMicroseconds);
  m.gemm_wave_overhead_us = r.optional_number("gemm_wave_overhead_us", 0, kMicroseconds);
  m.nccl_launch_us = r.number("nccl_launch_us", kMicroseconds);
  m.contention_factor = r.number("contention_factor", kScale);
  m.comm_rate_under_compute = r.fraction("comm_rate_under_compute");
  m.concurrent_kernel_efficiency = r.fraction("concurrent_kernel_efficiency");
  read_protocols(r, file_name, &m.nccl_protocols);
  read_gemm_table(r, file_name, &m.gemm_efficiency);
  if (!r.error().empty()) return invalid_input(r.error());
  if (m.nccl_channels > m.sm_count) {
    return invalid_input(fmt::format("{}: nccl_channels ({}) exceeds sm_count ({})", file_name, m.nccl_channels,
                                     m.sm_count));
  }
  // One collective's SMs, scaled by the contention factor, can take at most
  // all of the compute.
  if (static_cast<double>(m.nccl_channels) / m.sm_count * m.contention_factor > 1) {
    return invalid_input(fmt::format(
        "{}: nccl_channels / sm_count * contention_factor = {} / {} * {} exceeds 1 (a collective would take more "
        "than all of the compute)",
        file_name, m.nccl_channels, m.sm_count, m.contention_factor));
  }
  return m;
}

std::vector<std::string> device_model_candidates(const std::string& name) {
  std::vector<std::string> out;
  const std::string leaf = "devices/" + name + ".json";
  if (const char* env = std::getenv("STREAMLENS_ASSETS"); env && *env) out.push_back(std::string(env) + "/" + leaf);
  // An installed binary finds its prefix's files before the source tree it
  // was built from (docs/install.md): PREFIX/bin -> PREFIX/share/streamlens.
  if (std::string dir = executable_dir(); !dir.empty()) {
    out.push_back(dir + "/../share/streamlens/" + leaf);
    out.push_back(dir + "/../assets/" + leaf);
    out.push_back(dir + "/../share/streamlens/assets/" + leaf);
  }
#ifdef SL_ASSETS_DIR
  out.push_back(std::string(SL_ASSETS_DIR) + "/" + leaf);
#endif
  return out;
}

std::string stock_device_for_gpu(const std::string& gpu_name) {
  std::string lower = gpu_name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* name : {"h200", "h100", "a100"}) {
    if (lower.find(name) != std::string::npos) return name;
  }
  return "";
}

Result<DeviceModel> load_device_model(const std::string& name_or_path) {
  if (name_or_path.empty()) return invalid_input("empty device model name");
  std::string path;
  bool is_path = name_or_path.find('/') != std::string::npos ||
                 (name_or_path.size() > 5 && name_or_path.ends_with(".json"));
  if (is_path) {
    path = name_or_path;
  } else {
    std::vector<std::string> candidates = device_model_candidates(name_or_path);
    for (const std::string& c : candidates) {
      std::error_code ec;
      if (std::filesystem::is_regular_file(c, ec)) {
        path = c;
        break;
      }
    }
    if (path.empty()) {
      std::string tried;
      for (const std::string& c : candidates) tried += "\n  " + c;
      return not_found(fmt::format("device model '{}' not found; tried:{}", name_or_path, tried));
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(fmt::format("{}: cannot open device file", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_device_model(text.str(), path);
}

double graph_rerecord_us(const DeviceModel& model, int64_t commands, int64_t retraced) {
  retraced = std::clamp<int64_t>(retraced, 0, commands);
  return static_cast<double>(commands - retraced) * model.host_graph_rerecord_us +
         static_cast<double>(retraced) * model.host_graph_retrace_us;
}

double* bandwidth_scale(DeviceModel& model, hlo::Opcode op) {
  switch (op) {
    case hlo::Opcode::kAllGather: return &model.all_gather_bandwidth_scale;
    case hlo::Opcode::kReduceScatter: return &model.reduce_scatter_bandwidth_scale;
    case hlo::Opcode::kAllReduce: return &model.all_reduce_bandwidth_scale;
    default: return nullptr;
  }
}

const double* bandwidth_scale(const DeviceModel& model, hlo::Opcode op) {
  return bandwidth_scale(const_cast<DeviceModel&>(model), op);
}

double* rate_beside_confined_gemm(DeviceModel& model, hlo::Opcode op) {
  switch (op) {
    case hlo::Opcode::kAllGather: return &model.all_gather_rate_beside_confined_gemm;
    case hlo::Opcode::kReduceScatter: return &model.reduce_scatter_rate_beside_confined_gemm;
    case hlo::Opcode::kAllReduce: return &model.all_reduce_rate_beside_confined_gemm;
    default: return nullptr;
  }
}

double comm_rate_beside_confined_gemm(const DeviceModel& model, hlo::Opcode op) {
  const double* rate = rate_beside_confined_gemm(const_cast<DeviceModel&>(model), op);
  return rate ? *rate : model.comm_rate_beside_confined_gemm;
}

std::string rate_beside_confined_gemm_key(hlo::Opcode op) {
  std::string key = fmt::format("{}_rate_beside_confined_gemm", hlo::opcode_name(op));
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

}  // namespace sl::sim
