#include "core/exec/results_json.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace sl::exec {
namespace {

// ordered_json keeps the documented key order: device, replica, partition, outputs.
using json = nlohmann::ordered_json;

json value_to_json(double v, hlo::PrimitiveType type) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (!hlo::is_floating(type)) {
    if (hlo::is_integral(type) && !hlo::is_signed_integral(type)) return static_cast<uint64_t>(v);
    return static_cast<int64_t>(v);
  }
  return v;
}

Result<double> value_from_json(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_boolean()) return j.get<bool>() ? 1.0 : 0.0;
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return invalid_input(fmt::format("results: value {} is not a number", j.dump()));
}

// Shapes in results are arrays: "f32[4,2]", "pred[]".
Result<hlo::Shape> shape_from_text(const std::string& text) {
  size_t open = text.find('[');
  if (open == std::string::npos || text.back() != ']') {
    return invalid_input(fmt::format("results: bad shape '{}'", text));
  }
  auto type = hlo::parse_primitive_type(text.substr(0, open));
  if (!type || *type == hlo::PrimitiveType::kToken) {
    return invalid_input(fmt::format("results: bad element type in shape '{}'", text));
  }
  std::vector<int64_t> dims;
  std::string body = text.substr(open + 1, text.size() - open - 2);
  size_t pos = 0;
  while (pos < body.size()) {
    size_t comma = body.find(',', pos);
    std::string part = body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    try {
      dims.push_back(std::stoll(part));
    } catch (const std::exception&) {
      return invalid_input(fmt::format("results: bad dimension '{}' in shape '{}'", part, text));
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return hlo::Shape::array(*type, std::move(dims));
}

}  // namespace

std::string results_to_json(const std::vector<DeviceResults>& results) {
  json devices = json::array();
  for (const DeviceResults& d : results) {
    json outputs = json::array();
    for (const Literal& literal : d.outputs) {
      json values = json::array();
      for (double v : literal.values) values.push_back(value_to_json(v, literal.shape.type));
      outputs.push_back({{"shape", hlo::to_string(literal.shape)}, {"values", std::move(values)}});
    }
    devices.push_back({{"device", d.device},
                       {"replica", d.replica},
                       {"partition", d.partition},
                       {"outputs", std::move(outputs)}});
  }
  json root = {{"devices", std::move(devices)}};
  return root.dump() + "\n";
}

Result<std::vector<DeviceResults>> results_from_json(const std::string& text) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object() || !root.contains("devices") || !root["devices"].is_array()) {
    return invalid_input("results: not a JSON object with a \"devices\" array");
  }
  std::vector<DeviceResults> out;
  for (const json& d : root["devices"]) {
    if (!d.is_object() || !d.contains("outputs") || !d["outputs"].is_array()) {
      return invalid_input("results: a device entry has no \"outputs\" array");
    }
    DeviceResults r;
    r.device = d.value("device", int64_t{0});
    r.replica = d.value("replica", int64_t{0});
    r.partition = d.value("partition", int64_t{0});
    for (const json& o : d["outputs"]) {
      if (!o.is_object() || !o.contains("shape") || !o["shape"].is_string() || !o.contains("values") ||
          !o["values"].is_array()) {
        return invalid_input("results: an output needs \"shape\" (string) and \"values\" (array)");
      }
      Literal literal;
      SL_ASSIGN_OR_RETURN(literal.shape, shape_from_text(o["shape"].get<std::string>()));
      for (const json& v : o["values"]) {
        SL_ASSIGN_OR_RETURN(double value, value_from_json(v));
        literal.values.push_back(value);
      }
      if (static_cast<int64_t>(literal.values.size()) != literal.shape.element_count()) {
        return invalid_input(fmt::format("results: shape {} needs {} values, got {}",
                                         o["shape"].get<std::string>(), literal.shape.element_count(),
                                         literal.values.size()));
      }
      r.outputs.push_back(std::move(literal));
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace sl::exec
