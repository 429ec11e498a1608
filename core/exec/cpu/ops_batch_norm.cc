// batch-norm-inference, batch-norm-training and batch-norm-grad with the
// semantics of XLA's operation reference (and its BatchNormExpander): per
// feature f of dimension feature_index, over the N elements of that feature,
//   mean = sum(x) / N, var = sum((x - mean)^2) / N (biased)
//   y = scale * (x - mean) / sqrt(var + epsilon) + offset
//   grad: d_offset = sum(dy), d_scale = sum(dy * (x - mean)) / sqrt(var + eps),
//         dx = scale / sqrt(var + eps) * (dy - sum(dy) / N
//              - (x - mean) * sum(dy * (x - mean)) / (N * (var + eps)))
// Sums run in double; results round to the element type.

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {
namespace {

using hlo::Opcode;

struct Layout {
  int64_t features = 0, inner = 1;  // element i has feature (i / inner) % features
  int64_t feature(size_t i) const { return (static_cast<int64_t>(i) / inner) % features; }
};

Result<double> number_attribute(const hlo::Instruction& inst, std::string_view name) {
  auto it = inst.attributes.find(name);
  if (it == inst.attributes.end()) return invalid_input(fmt::format("needs {}=", name));
  try {
    return std::stod(it->second);
  } catch (...) {
    return invalid_input(fmt::format("{}={} is not a number", name, it->second));
  }
}

Result<Layout> layout_of(const hlo::Instruction& inst, const hlo::Shape& operand) {
  SL_ASSIGN_OR_RETURN(double index, number_attribute(inst, "feature_index"));
  const auto f = static_cast<int64_t>(index);
  if (f < 0 || f >= operand.rank()) {
    return invalid_input(fmt::format("feature_index={} is not a dimension of {}", f, hlo::to_string(operand)));
  }
  Layout l;
  l.features = operand.dims[static_cast<size_t>(f)];
  for (size_t d = static_cast<size_t>(f) + 1; d < operand.dims.size(); ++d) l.inner *= operand.dims[d];
  return l;
}

Status per_feature(const Literal& l, const Layout& layout, std::string_view what) {
  if (l.shape.rank() != 1 || l.shape.dims[0] != layout.features) {
    return invalid_input(fmt::format("{} is {}, expected one value per feature ({})", what, hlo::to_string(l.shape),
                                     layout.features));
  }
  return ok_status();
}

// Per feature: sum of x (minus `subtract`, times `weight`, when given).
std::vector<double> feature_sums(const Literal& x, const Layout& layout, const std::vector<double>* subtract = nullptr,
                                 const Literal* weight = nullptr) {
  std::vector<double> sums(static_cast<size_t>(layout.features), 0.0);
  for (size_t i = 0; i < x.values.size(); ++i) {
    const auto f = static_cast<size_t>(layout.feature(i));
    const double v = subtract ? x.values[i] - (*subtract)[f] : x.values[i];
    sums[f] += weight ? v * weight->values[i] : v;
  }
  return sums;
}

Literal rounded(const hlo::Shape& shape, std::vector<double> values) {
  for (double& v : values) v = round_to_type(v, shape.type);
  return Literal{shape, std::move(values)};
}

}  // namespace

Result<std::vector<Literal>> eval_batch_norm(const hlo::Instruction& inst, const Operands& operands,
                                             const std::vector<hlo::Shape>& result_shapes) {
  const Opcode op = inst.opcode;
  const size_t want = op == Opcode::kBatchNormTraining ? 3 : 5;
  if (operands.size() != want) return invalid_input(fmt::format("takes {} operands, got {}", want, operands.size()));
  const Literal& x = *operands[0];
  SL_ASSIGN_OR_RETURN(Layout layout, layout_of(inst, x.shape));
  SL_ASSIGN_OR_RETURN(double epsilon, number_attribute(inst, "epsilon"));
  epsilon = static_cast<double>(static_cast<float>(epsilon));  // XLA keeps epsilon as a float
  for (size_t k = 1; k < operands.size(); ++k) {
    if (op == Opcode::kBatchNormGrad && k == 4) continue;  // grad_output is shaped like the operand
    SL_RETURN_IF_ERROR(per_feature(*operands[k], layout, fmt::format("operand {}", k)));
  }
  const double n = layout.features > 0 ? static_cast<double>(x.values.size()) / static_cast<double>(layout.features)
                                       : 0.0;
  const Literal& scale = *operands[1];
  std::vector<double> mean(static_cast<size_t>(layout.features)), var(mean.size());
  if (op == Opcode::kBatchNormTraining) {
    mean = feature_sums(x, layout);
    for (double& m : mean) m /= n;
    for (size_t i = 0; i < x.values.size(); ++i) {
      const auto f = static_cast<size_t>(layout.feature(i));
      const double c = x.values[i] - mean[f];
      var[f] += c * c;
    }
    for (double& v : var) v /= n;
  } else {
    const Literal& m = op == Opcode::kBatchNormInference ? *operands[3] : *operands[2];
    const Literal& v = op == Opcode::kBatchNormInference ? *operands[4] : *operands[3];
    mean = m.values;
    var = v.values;
  }
  std::vector<double> y(x.values.size());
  if (op != Opcode::kBatchNormGrad) {
    const Literal& offset = *operands[2];
    for (size_t i = 0; i < x.values.size(); ++i) {
      const auto f = static_cast<size_t>(layout.feature(i));
      y[i] = scale.values[f] * (x.values[i] - mean[f]) / std::sqrt(var[f] + epsilon) + offset.values[f];
    }
    if (op == Opcode::kBatchNormInference) return std::vector<Literal>{rounded(x.shape, std::move(y))};
    if (result_shapes.size() != 3) return invalid_input("batch-norm-training returns (output, mean, variance)");
    return std::vector<Literal>{rounded(result_shapes[0], std::move(y)), rounded(result_shapes[1], mean),
                                rounded(result_shapes[2], var)};
  }
  const Literal& dy = *operands[4];
  if (dy.values.size() != x.values.size()) return invalid_input("grad_output must be shaped like the operand");
  if (result_shapes.size() != 3) return invalid_input("batch-norm-grad returns (grad_operand, grad_scale, grad_offset)");
  const std::vector<double> sum_dy = feature_sums(dy, layout);
  const std::vector<double> sum_dy_c = feature_sums(x, layout, &mean, &dy);
  std::vector<double> d_scale(mean.size());
  for (size_t f = 0; f < mean.size(); ++f) d_scale[f] = sum_dy_c[f] / std::sqrt(var[f] + epsilon);
  for (size_t i = 0; i < x.values.size(); ++i) {
    const auto f = static_cast<size_t>(layout.feature(i));
    const double c = x.values[i] - mean[f];
    y[i] = scale.values[f] / std::sqrt(var[f] + epsilon) *
           (dy.values[i] - sum_dy[f] / n - c * sum_dy_c[f] / (n * (var[f] + epsilon)));
  }
  return std::vector<Literal>{rounded(result_shapes[0], std::move(y)), rounded(result_shapes[1], d_scale),
                              rounded(result_shapes[2], sum_dy)};
}

}  // namespace sl::exec::cpu
