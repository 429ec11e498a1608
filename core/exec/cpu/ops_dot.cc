// dot and the __cublas$gemm custom-call. Products are accumulated in double
// and the result rounded once to the result type.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {
namespace {

// Flat offsets of every combination of `which` dimensions (row-major over
// them, in the listed order).
std::vector<int64_t> offsets(const std::vector<int64_t>& which, const std::vector<int64_t>& dims,
                             const std::vector<int64_t>& strides) {
  std::vector<int64_t> sizes;
  for (int64_t d : which) sizes.push_back(dims[static_cast<size_t>(d)]);
  std::vector<int64_t> out;
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  out.reserve(static_cast<size_t>(count));
  if (count == 0) return out;
  std::vector<int64_t> index(sizes.size(), 0);
  do {
    int64_t off = 0;
    for (size_t i = 0; i < which.size(); ++i) off += index[i] * strides[static_cast<size_t>(which[i])];
    out.push_back(off);
  } while (next_index(index, sizes));
  return out;
}

std::vector<int64_t> free_dims(int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      out.push_back(d);
    }
  }
  return out;
}

Status check_dims(const std::vector<int64_t>& which, int64_t rank, const char* what) {
  std::vector<int64_t> seen;
  for (int64_t d : which) {
    if (d < 0 || d >= rank || std::find(seen.begin(), seen.end(), d) != seen.end()) {
      return invalid_input(fmt::format("dot: {} dimension {} is out of range or repeated (rank {})", what, d, rank));
    }
    seen.push_back(d);
  }
  return ok_status();
}

std::vector<int64_t> json_int_list(const nlohmann::json& j) {
  std::vector<int64_t> out;
  if (!j.is_array()) return out;
  for (const auto& v : j) {
    if (v.is_string()) out.push_back(std::stoll(v.get<std::string>()));
    else if (v.is_number_integer()) out.push_back(v.get<int64_t>());
  }
  return out;
}

double json_number(const nlohmann::json& obj, const char* key, double fallback) {
  if (!obj.is_object() || !obj.contains(key)) return fallback;
  const auto& v = obj[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return std::stod(v.get<std::string>());
  return fallback;
}

}  // namespace

Result<Literal> eval_dot(const hlo::DotDims& dims, const Literal& lhs, const Literal& rhs,
                         const hlo::Shape& result_shape) {
  const hlo::Shape& ls = lhs.shape;
  const hlo::Shape& rs = rhs.shape;
  SL_RETURN_IF_ERROR(check_dims(dims.lhs_batch, ls.rank(), "lhs batch"));
  SL_RETURN_IF_ERROR(check_dims(dims.rhs_batch, rs.rank(), "rhs batch"));
  SL_RETURN_IF_ERROR(check_dims(dims.lhs_contracting, ls.rank(), "lhs contracting"));
  SL_RETURN_IF_ERROR(check_dims(dims.rhs_contracting, rs.rank(), "rhs contracting"));
  if (dims.lhs_batch.size() != dims.rhs_batch.size() || dims.lhs_contracting.size() != dims.rhs_contracting.size()) {
    return invalid_input("dot: lhs and rhs have different numbers of batch or contracting dimensions");
  }
  std::vector<int64_t> expected;
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i) {
    int64_t a = ls.dims[static_cast<size_t>(dims.lhs_batch[i])], b = rs.dims[static_cast<size_t>(dims.rhs_batch[i])];
    if (a != b) return invalid_input(fmt::format("dot: batch dimension sizes differ ({} vs {})", a, b));
    expected.push_back(a);
  }
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    int64_t a = ls.dims[static_cast<size_t>(dims.lhs_contracting[i])];
    int64_t b = rs.dims[static_cast<size_t>(dims.rhs_contracting[i])];
    if (a != b) return invalid_input(fmt::format("dot: contracting dimension sizes differ ({} vs {})", a, b));
  }
  auto lfree = free_dims(ls.rank(), dims.lhs_batch, dims.lhs_contracting);
  auto rfree = free_dims(rs.rank(), dims.rhs_batch, dims.rhs_contracting);
  for (int64_t d : lfree) expected.push_back(ls.dims[static_cast<size_t>(d)]);
  for (int64_t d : rfree) expected.push_back(rs.dims[static_cast<size_t>(d)]);
  if (!result_shape.is_array() || expected != result_shape.dims) {
    return invalid_input(fmt::format("dot: result shape {} does not match the operands (expected dims [{}])",
                                     hlo::to_string(result_shape), fmt::join(expected, ",")));
  }

  auto lstr = row_major_strides(ls.dims);
  auto rstr = row_major_strides(rs.dims);
  auto lb = offsets(dims.lhs_batch, ls.dims, lstr), rb = offsets(dims.rhs_batch, rs.dims, rstr);
  auto lc = offsets(dims.lhs_contracting, ls.dims, lstr), rc = offsets(dims.rhs_contracting, rs.dims, rstr);
  auto lf = offsets(lfree, ls.dims, lstr), rf = offsets(rfree, rs.dims, rstr);

  Literal out{result_shape, std::vector<double>(static_cast<size_t>(result_shape.element_count()))};
  size_t o = 0;
  for (size_t b = 0; b < lb.size(); ++b) {
    for (int64_t m : lf) {
      for (int64_t n : rf) {
        double acc = 0.0;
        const double* lp = lhs.values.data() + lb[b] + m;
        const double* rp = rhs.values.data() + rb[b] + n;
        for (size_t k = 0; k < lc.size(); ++k) acc += lp[lc[k]] * rp[rc[k]];
        out.values[o++] = round_to_type(acc, result_shape.type);
      }
    }
  }
  return out;
}

namespace {

// The epilogue's activation on one value (GELU is the tanh approximation
// cuBLASLt implements).
double activate(const std::string& epilogue, double x) {
  if (epilogue.find("RELU") != std::string::npos) return x > 0 ? x : 0.0;
  if (epilogue.find("GELU") != std::string::npos) {
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
  }
  return x;
}

}  // namespace

Result<std::vector<Literal>> eval_gemm(const hlo::Instruction& inst, const Operands& operands,
                                       const std::vector<hlo::Shape>& output_shapes) {
  const std::string& target = inst.custom_call_target;
  if (operands.size() < 2 || output_shapes.empty()) {
    return invalid_input(fmt::format("'{}': {} needs at least 2 operands and a result", inst.name, target));
  }
  nlohmann::json config = nlohmann::json::parse(inst.backend_config, nullptr, /*allow_exceptions=*/false);
  nlohmann::json gemm = nlohmann::json::object();
  if (config.is_object()) gemm = config.contains("gemm_backend_config") ? config["gemm_backend_config"] : config;
  hlo::DotDims dims = inst.dot;
  hlo::GemmConfig cfg;
  try {
    if (inst.gemm_config) {
      cfg = *inst.gemm_config;
    } else {
      cfg.alpha_real = json_number(gemm, "alpha_real", 1.0);
      cfg.beta = json_number(gemm, "beta", 0.0);
      if (gemm.is_object() && gemm.contains("epilogue") && gemm["epilogue"].is_string()) {
        cfg.epilogue = gemm["epilogue"].get<std::string>();
      }
    }
    if (dims.lhs_contracting.empty() && dims.rhs_contracting.empty() && gemm.is_object() &&
        gemm.contains("dot_dimension_numbers")) {
      const auto& dn = gemm["dot_dimension_numbers"];
      dims.lhs_contracting = json_int_list(dn.value("lhs_contracting_dimensions", nlohmann::json::array()));
      dims.rhs_contracting = json_int_list(dn.value("rhs_contracting_dimensions", nlohmann::json::array()));
      dims.lhs_batch = json_int_list(dn.value("lhs_batch_dimensions", nlohmann::json::array()));
      dims.rhs_batch = json_int_list(dn.value("rhs_batch_dimensions", nlohmann::json::array()));
    }
  } catch (const std::exception& e) {
    return invalid_input(fmt::format("'{}': bad gemm backend_config: {}", inst.name, e.what()));
  }
  // A dot with no contracting dimension is an outer product; cuBLAS GEMMs
  // from XLA always contract one, so an empty list means the config was absent.
  if (dims.lhs_contracting.empty() || dims.rhs_contracting.empty()) {
    return invalid_input(fmt::format("'{}': {} without dot dimensions (backend_config "
                                     "gemm_backend_config.dot_dimension_numbers)", inst.name, target));
  }
  const std::string& epilogue = cfg.epilogue;
  const bool has_bias = epilogue.find("BIAS") != std::string::npos;
  const bool has_aux = epilogue.size() > 4 && epilogue.compare(epilogue.size() - 4, 4, "_AUX") == 0;
  if (epilogue != "DEFAULT" && epilogue != "RELU" && epilogue != "BIAS" && epilogue != "BIAS_RELU" &&
      epilogue != "GELU" && epilogue != "GELU_AUX" && epilogue != "BIAS_GELU" && epilogue != "BIAS_GELU_AUX") {
    return invalid_input(fmt::format("'{}': epilogue {} is not supported by the cpu backend", inst.name, epilogue));
  }
  const hlo::Shape& output_shape = output_shapes[0];
  hlo::Shape wide = output_shape;
  wide.type = hlo::PrimitiveType::kF64;  // keep the products unrounded until the epilogue
  SL_ASSIGN_OR_RETURN(Literal product, eval_dot(dims, *operands[0], *operands[1], wide));
  // Operands as XLA's GEMM rewriter orders them: a, b, then c (only when
  // beta != 0), then the bias vector of the BIAS epilogues.
  size_t next = 2;
  const Literal* c = nullptr;
  const Literal* bias = nullptr;
  if (cfg.beta != 0.0) {
    if (operands.size() <= next || operands[next]->shape.element_count() != output_shape.element_count()) {
      return invalid_input(fmt::format("'{}': beta={} needs an operand {} shaped like the output", inst.name,
                                       cfg.beta, next));
    }
    c = operands[next++];
  }
  if (has_bias) {
    const int64_t columns = output_shape.dims.empty() ? 1 : output_shape.dims.back();
    if (operands.size() <= next || (operands[next]->shape.element_count() != columns &&
                                    operands[next]->shape.element_count() != output_shape.element_count())) {
      return invalid_input(fmt::format("'{}': epilogue {} needs a bias operand {} of {} elements", inst.name,
                                       epilogue, next, columns));
    }
    bias = operands[next++];
  }
  const size_t n = product.values.size();
  std::vector<double> pre(n);
  for (size_t i = 0; i < n; ++i) {
    double v = cfg.alpha_real * product.values[i];
    if (c) v += cfg.beta * c->values[i];
    if (bias) v += bias->values[bias->values.size() == n ? i : i % bias->values.size()];
    pre[i] = v;
  }
  std::vector<Literal> out;
  Literal d{output_shape, std::vector<double>(n)};
  for (size_t i = 0; i < n; ++i) d.values[i] = round_to_type(activate(epilogue, pre[i]), output_shape.type);
  out.push_back(std::move(d));
  if (has_aux && output_shapes.size() > 1 && output_shapes[1].element_count() == static_cast<int64_t>(n)) {
    // GELU_AUX keeps the value before the activation for the backward pass.
    Literal aux{output_shapes[1], std::vector<double>(n)};
    for (size_t i = 0; i < n; ++i) aux.values[i] = round_to_type(pre[i], output_shapes[1].type);
    out.push_back(std::move(aux));
  }
  return out;
}

}  // namespace sl::exec::cpu
