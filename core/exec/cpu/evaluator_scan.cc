// scan: `scan(inputs..., inits...), dimensions={d}, num_carries=K,
// is_reverse=, to_apply=f`. For each index t of dimension d (from the end
// when is_reverse=true), f(inputs sliced at t..., carries...) returns
// (outputs..., new carries...); the result is (the outputs stacked along d...,
// the final carries...). The order of f's parameters and results is what
// XLA's GPU compiler relies on when it turns a scan into a reduce-window
// (its `_rw_wrapper` computation takes the carry as the accumulator and the
// input as the element), and what JAX's cumsum dumps show.

#include <fmt/format.h>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/evaluator.h"

namespace sl::exec::cpu {
namespace {

Status op_error(const hlo::Instruction& inst, const std::string& what) {
  return invalid_input(fmt::format("'{}' ({}): {}", inst.name, hlo::opcode_name(inst.opcode), what));
}

int64_t attribute_int(const hlo::Instruction& inst, std::string_view name, int64_t fallback) {
  auto it = inst.attributes.find(name);
  if (it == inst.attributes.end()) return fallback;
  try {
    return std::stoll(it->second);
  } catch (...) {
    return -1;
  }
}

bool attribute_true(const hlo::Instruction& inst, std::string_view name) {
  auto it = inst.attributes.find(name);
  return it != inst.attributes.end() && it->second == "true";
}

// Sizes before and after `d`: element (o, t, i) of an array with dims D is at
// (o * D[d] + t) * inner + i.
struct Around {
  int64_t outer = 1, inner = 1;
};
Around around(const std::vector<int64_t>& dims, size_t d) {
  Around a;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i < d) a.outer *= dims[i];
    if (i > d) a.inner *= dims[i];
  }
  return a;
}

Literal slice_at(const Literal& in, size_t d, int64_t t) {
  hlo::Shape shape = in.shape;
  shape.dims.erase(shape.dims.begin() + static_cast<std::ptrdiff_t>(d));
  shape.minor_to_major.clear();
  const Around a = around(in.shape.dims, d);
  const int64_t length = in.shape.dims[d];
  Literal out{shape, {}};
  out.values.reserve(static_cast<size_t>(a.outer * a.inner));
  for (int64_t o = 0; o < a.outer; ++o) {
    for (int64_t i = 0; i < a.inner; ++i) out.values.push_back(in.values[static_cast<size_t>((o * length + t) * a.inner + i)]);
  }
  return out;
}

Status place_at(Literal& stacked, size_t d, int64_t t, const Literal& y) {
  const Around a = around(stacked.shape.dims, d);
  if (static_cast<int64_t>(y.values.size()) != a.outer * a.inner) {
    return invalid_input(fmt::format("a step's output {} does not fit the stacked result {}", hlo::to_string(y.shape),
                                     hlo::to_string(stacked.shape)));
  }
  const int64_t length = stacked.shape.dims[d];
  for (int64_t o = 0; o < a.outer; ++o) {
    for (int64_t i = 0; i < a.inner; ++i) {
      stacked.values[static_cast<size_t>((o * length + t) * a.inner + i)] = y.values[static_cast<size_t>(o * a.inner + i)];
    }
  }
  return ok_status();
}

}  // namespace

Result<Value> Evaluator::evaluate_scan(const hlo::Instruction& inst, const std::vector<const Value*>& operands) {
  if (inst.called.empty()) return op_error(inst, "needs to_apply=");
  if (inst.dimensions.size() != 1) return op_error(inst, "needs one scanned dimension (dimensions={d})");
  const int64_t carries = attribute_int(inst, "num_carries", 0);
  if (carries < 0 || static_cast<size_t>(carries) > operands.size()) {
    return op_error(inst, fmt::format("num_carries={} does not fit its {} operands", carries, operands.size()));
  }
  const size_t inputs = operands.size() - static_cast<size_t>(carries);
  if (inputs == 0) return op_error(inst, "has no input to scan");
  const auto d = static_cast<size_t>(inst.dimensions[0]);
  int64_t length = -1;
  for (size_t k = 0; k < inputs; ++k) {
    if (operands[k]->is_tuple()) return op_error(inst, fmt::format("input {} is a tuple", k));
    const hlo::Shape& s = operands[k]->literal().shape;
    if (d >= s.dims.size() || (length >= 0 && s.dims[d] != length)) {
      return op_error(inst, fmt::format("input {} ({}) has no dimension {} of the scanned length", k,
                                        hlo::to_string(s), d));
    }
    length = s.dims[d];
  }
  if (!inst.shape.is_tuple() || inst.shape.elements.size() < static_cast<size_t>(carries)) {
    return op_error(inst, "the result must be a tuple of the stacked outputs and the carries");
  }
  const size_t outputs = inst.shape.elements.size() - static_cast<size_t>(carries);
  std::vector<Literal> stacked;
  for (size_t j = 0; j < outputs; ++j) {
    const hlo::Shape& s = inst.shape.elements[j];
    if (!s.is_array() || d >= s.dims.size() || s.dims[d] != length) {
      return op_error(inst, fmt::format("output {} ({}) is not stacked along dimension {}", j, hlo::to_string(s), d));
    }
    stacked.push_back(zeros_literal(s));
  }
  std::vector<Value> carry;
  for (size_t k = inputs; k < operands.size(); ++k) carry.push_back(*operands[k]);
  const bool reverse = attribute_true(inst, "is_reverse");
  Scope inner;
  inner.traced = false;  // the scan is one op
  for (int64_t step = 0; step < length; ++step) {
    const int64_t t = reverse ? length - 1 - step : step;
    std::vector<Value> args;
    for (size_t k = 0; k < inputs; ++k) args.push_back(Value::of(slice_at(operands[k]->literal(), d, t)));
    args.insert(args.end(), carry.begin(), carry.end());
    SL_ASSIGN_OR_RETURN(Value result, evaluate(inst.called[0], args, inner));
    if (!result.is_tuple() || result.elements.size() != outputs + carry.size()) {
      return op_error(inst, fmt::format("to_apply must return {} outputs and {} carries", outputs, carry.size()));
    }
    for (size_t j = 0; j < outputs; ++j) {
      if (result.elements[j].is_tuple()) return op_error(inst, fmt::format("output {} is a tuple", j));
      Status placed = place_at(stacked[j], d, t, result.elements[j].literal());
      if (!placed) return op_error(inst, placed.message());
    }
    for (size_t k = 0; k < carry.size(); ++k) carry[k] = result.elements[outputs + k];
  }
  std::vector<Value> elements;
  for (Literal& l : stacked) elements.push_back(Value::of(std::move(l)));
  elements.insert(elements.end(), carry.begin(), carry.end());
  return Value::tuple(std::move(elements));
}

}  // namespace sl::exec::cpu
