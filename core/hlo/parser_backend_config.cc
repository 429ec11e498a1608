// backend_config JSON: the few fields the tool reads. XLA writes integers as
// JSON strings ("operation_queue_id":"1", "n":"4", dimension lists ["1"]),
// older dumps as numbers; both are accepted. Nothing here throws out.

#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "core/hlo/parser_impl.h"

namespace sl::hlo::parser_internal {
namespace {

using nlohmann::json;

std::optional<int64_t> json_int(const json& value) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return value.get<int64_t>();
  }
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
  }
  return std::nullopt;
}

// JSON numbers, or numbers written as strings ("1", "0.5").
std::optional<double> json_double(const json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    double v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
  }
  return std::nullopt;
}

// Max bracket depth outside strings; keeps pathological input away from the
// JSON library.
int json_depth(std::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      max_depth = std::max(max_depth, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return max_depth;
}

std::string read_int_list(const json& object, const char* key, std::vector<int64_t>& out) {
  auto it = object.find(key);
  if (it == object.end()) return {};
  if (!it->is_array()) return fmt::format("{} is not a list", key);
  out.clear();
  for (const json& v : *it) {
    auto i = json_int(v);
    if (!i) return fmt::format("{} holds a value that is not an integer", key);
    out.push_back(*i);
  }
  return {};
}

std::string read_fields(const json& config, Instruction& inst) {
  if (auto it = config.find("operation_queue_id"); it != config.end()) {
    auto id = json_int(*it);
    if (!id || *id < 0) return "backend_config operation_queue_id is not a non-negative integer; ignored";
    inst.operation_queue_id = id;
  }
  if (auto it = config.find("known_trip_count"); it != config.end()) {
    std::optional<int64_t> n;
    if (it->is_object()) {
      if (auto nit = it->find("n"); nit != it->end()) n = json_int(*nit);
    }
    if (!n || *n < 0) return "backend_config known_trip_count is not {\"n\":\"N\"} with N >= 0; ignored";
    inst.known_trip_count = n;
  }
  if (auto it = config.find("wait_on_operation_queues"); it != config.end()) {
    if (!it->is_array()) return "backend_config wait_on_operation_queues is not a list; ignored";
    std::vector<int64_t> queues;
    for (const json& v : *it) {
      auto id = json_int(v);
      if (!id || *id < 0) return "backend_config wait_on_operation_queues holds a value that is not a queue id; ignored";
      queues.push_back(*id);
    }
    inst.wait_on_operation_queues = std::move(queues);
  }
  if (inst.custom_call_target == "__cublas$gemm" || inst.custom_call_target == "__cublas$lt$matmul") {
    // Current XLA nests the GEMM config; older dumps put it at the top level.
    const json* gemm = &config;
    if (auto it = config.find("gemm_backend_config"); it != config.end() && it->is_object()) gemm = &*it;
    GemmConfig gc;
    for (auto [key, field] : {std::pair{"alpha_real", &gc.alpha_real}, std::pair{"alpha_imag", &gc.alpha_imag},
                              std::pair{"beta", &gc.beta}}) {
      auto it = gemm->find(key);
      if (it == gemm->end()) continue;
      auto v = json_double(*it);
      if (!v) return fmt::format("GEMM backend_config {} is not a number", key);
      *field = *v;
    }
    if (auto it = gemm->find("epilogue"); it != gemm->end()) {
      if (!it->is_string()) return "GEMM backend_config epilogue is not a string";
      gc.epilogue = it->get<std::string>();
    }
    inst.gemm_config = gc;
    auto dims = gemm->find("dot_dimension_numbers");
    if (dims == gemm->end() || !dims->is_object()) {
      return "GEMM backend_config has no dot_dimension_numbers";
    }
    for (auto [key, field] : {std::pair{"lhs_contracting_dimensions", &inst.dot.lhs_contracting},
                              std::pair{"rhs_contracting_dimensions", &inst.dot.rhs_contracting},
                              std::pair{"lhs_batch_dimensions", &inst.dot.lhs_batch},
                              std::pair{"rhs_batch_dimensions", &inst.dot.rhs_batch}}) {
      std::string problem = read_int_list(*dims, key, *field);
      if (!problem.empty()) return "GEMM backend_config: " + problem;
    }
  }
  return {};
}

}  // namespace

std::string apply_backend_config(Instruction& inst) {
  std::string_view text = inst.backend_config;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return {};  // not JSON: nothing to read
  if (json_depth(text) > kMaxNesting) {
    return fmt::format("backend_config nests deeper than {} levels; its fields are ignored", kMaxNesting);
  }
  try {
    json config = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (config.is_discarded() || !config.is_object()) return "backend_config is not a JSON object; its fields are ignored";
    return read_fields(config, inst);
  } catch (const std::exception& e) {
    return fmt::format("backend_config could not be read: {}", e.what());
  }
}

}  // namespace sl::hlo::parser_internal
