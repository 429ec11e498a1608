#include "core/exec/cpu/collectives.h"

#include <fmt/format.h>

namespace sl::exec::cpu {
namespace {

Status error(const hlo::Instruction& inst, const std::string& what) {
  return invalid_input(fmt::format("'{}' ({}): {}", inst.name, hlo::opcode_name(inst.async_wrapped.value_or(inst.opcode)), what));
}

Status check_inputs(const hlo::Instruction& inst, const std::vector<Contribution>& inputs,
                    const std::vector<hlo::Shape>& result_shapes) {
  if (inputs.empty()) return error(inst, "empty group");
  const size_t leaves = inputs[0]->size();
  if (leaves != result_shapes.size()) {
    return error(inst, fmt::format("{} operands but {} results", leaves, result_shapes.size()));
  }
  for (const Contribution& c : inputs) {
    if (c->size() != leaves) return error(inst, "group members disagree on the operand count");
    for (size_t i = 0; i < leaves; ++i) {
      if ((*c)[i].shape != (*inputs[0])[i].shape) {
        return error(inst, fmt::format("group members disagree on operand {} ({} vs {})", i,
                                       hlo::to_string((*c)[i].shape), hlo::to_string((*inputs[0])[i].shape)));
      }
    }
  }
  return ok_status();
}

Result<int64_t> collective_dimension(const hlo::Instruction& inst, const hlo::Shape& operand) {
  if (inst.dimensions.size() != 1) return error(inst, "needs dimensions={d}");
  int64_t d = inst.dimensions[0];
  if (d < 0 || d >= operand.rank()) {
    return error(inst, fmt::format("dimension {} is out of range for {}", d, hlo::to_string(operand)));
  }
  return d;
}

// Elementwise fold of leaf `leaf` over the group.
Result<Literal> reduce_leaf(const std::vector<Contribution>& inputs, size_t leaf, const Combiner& combine) {
  Literal acc = (*inputs[0])[leaf];
  std::vector<double> a(1), x(1);
  for (size_t j = 1; j < inputs.size(); ++j) {
    const Literal& in = (*inputs[j])[leaf];
    for (size_t e = 0; e < acc.values.size(); ++e) {
      a[0] = acc.values[e];
      x[0] = in.values[e];
      SL_RETURN_IF_ERROR(combine(a, x));
      acc.values[e] = a[0];
    }
  }
  return acc;
}

}  // namespace

Result<std::vector<Literal>> all_gather_result(const hlo::Instruction& inst, const std::vector<Contribution>& inputs,
                                               const std::vector<hlo::Shape>& result_shapes) {
  SL_RETURN_IF_ERROR(check_inputs(inst, inputs, result_shapes));
  std::vector<Literal> out;
  for (size_t i = 0; i < result_shapes.size(); ++i) {
    const hlo::Shape& in_shape = (*inputs[0])[i].shape;
    SL_ASSIGN_OR_RETURN(int64_t dim, collective_dimension(inst, in_shape));
    hlo::Shape expected = in_shape;
    expected.dims[static_cast<size_t>(dim)] *= static_cast<int64_t>(inputs.size());
    if (result_shapes[i].dims != expected.dims || result_shapes[i].type != in_shape.type) {
      return error(inst, fmt::format("result {} is {}, expected {} for a group of {}", i,
                                     hlo::to_string(result_shapes[i]), hlo::to_string(expected), inputs.size()));
    }
    // Row-major: `outer` blocks, each the members' blocks one after another.
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < dim; ++k) outer *= in_shape.dims[static_cast<size_t>(k)];
    for (int64_t k = dim; k < in_shape.rank(); ++k) inner *= in_shape.dims[static_cast<size_t>(k)];
    Literal lit{result_shapes[i], {}};
    lit.values.reserve(static_cast<size_t>(expected.element_count()));
    for (int64_t o = 0; o < outer; ++o) {
      for (const Contribution& c : inputs) {
        auto begin = (*c)[i].values.begin() + static_cast<ptrdiff_t>(o * inner);
        lit.values.insert(lit.values.end(), begin, begin + static_cast<ptrdiff_t>(inner));
      }
    }
    out.push_back(std::move(lit));
  }
  return out;
}

Result<std::vector<Literal>> all_reduce_result(const hlo::Instruction& inst, const std::vector<Contribution>& inputs,
                                               const std::vector<hlo::Shape>& result_shapes,
                                               const std::vector<Combiner>& combine) {
  SL_RETURN_IF_ERROR(check_inputs(inst, inputs, result_shapes));
  std::vector<Literal> out;
  for (size_t i = 0; i < result_shapes.size(); ++i) {
    const hlo::Shape& in_shape = (*inputs[0])[i].shape;
    if (result_shapes[i] != in_shape) {
      return error(inst, fmt::format("result {} is {}, expected {}", i, hlo::to_string(result_shapes[i]),
                                     hlo::to_string(in_shape)));
    }
    SL_ASSIGN_OR_RETURN(Literal lit, reduce_leaf(inputs, i, combine[i]));
    out.push_back(std::move(lit));
  }
  return out;
}

Result<std::vector<Literal>> reduce_scatter_result(const hlo::Instruction& inst,
                                                   const std::vector<Contribution>& inputs, int64_t rank,
                                                   const std::vector<hlo::Shape>& result_shapes,
                                                   const std::vector<Combiner>& combine) {
  SL_RETURN_IF_ERROR(check_inputs(inst, inputs, result_shapes));
  const auto n = static_cast<int64_t>(inputs.size());
  std::vector<Literal> out;
  for (size_t i = 0; i < result_shapes.size(); ++i) {
    const hlo::Shape& in_shape = (*inputs[0])[i].shape;
    SL_ASSIGN_OR_RETURN(int64_t dim, collective_dimension(inst, in_shape));
    const int64_t size = in_shape.dims[static_cast<size_t>(dim)];
    if (size % n != 0) {
      return error(inst, fmt::format("operand {} dimension {} (size {}) is not divisible by the group size {}", i,
                                     dim, size, n));
    }
    hlo::Shape expected = in_shape;
    expected.dims[static_cast<size_t>(dim)] = size / n;
    if (result_shapes[i] != expected) {
      return error(inst, fmt::format("result {} is {}, expected {}", i, hlo::to_string(result_shapes[i]),
                                     hlo::to_string(expected)));
    }
    SL_ASSIGN_OR_RETURN(Literal full, reduce_leaf(inputs, i, combine[i]));
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < dim; ++k) outer *= in_shape.dims[static_cast<size_t>(k)];
    for (int64_t k = dim + 1; k < in_shape.rank(); ++k) inner *= in_shape.dims[static_cast<size_t>(k)];
    const int64_t chunk = (size / n) * inner;
    Literal lit{expected, {}};
    lit.values.reserve(static_cast<size_t>(expected.element_count()));
    for (int64_t o = 0; o < outer; ++o) {
      auto begin = full.values.begin() + static_cast<ptrdiff_t>(o * size * inner + rank * chunk);
      lit.values.insert(lit.values.end(), begin, begin + static_cast<ptrdiff_t>(chunk));
    }
    out.push_back(std::move(lit));
  }
  return out;
}

}  // namespace sl::exec::cpu

namespace sl::exec::cpu {

Result<std::vector<Literal>> all_to_all_result(const hlo::Instruction& inst, const std::vector<Contribution>& inputs,
                                               int64_t rank, const std::vector<hlo::Shape>& result_shapes) {
  const size_t g = inputs.size();
  const auto me = static_cast<size_t>(rank);
  std::vector<Literal> out;
  if (inst.dimensions.empty()) {
    // Tuple form: operand j of every member goes to member j, in group order.
    if (result_shapes.size() != g) {
      return error(inst, fmt::format("a tuple all-to-all over {} devices needs {} operands", g, g));
    }
    for (size_t i = 0; i < g; ++i) {
      if (inputs[i]->size() != g) return error(inst, "members contribute different operand counts");
      out.push_back((*inputs[i])[me]);
      out.back().shape = result_shapes[i];
    }
    return out;
  }
  // Array form: each operand splits into g chunks along the dimension; chunk
  // `rank` of member i becomes chunk i of the result.
  for (size_t leaf = 0; leaf < result_shapes.size(); ++leaf) {
    const Literal& mine = (*inputs[me])[leaf];
    SL_ASSIGN_OR_RETURN(int64_t dim, collective_dimension(inst, mine.shape));
    const auto d = static_cast<size_t>(dim);
    if (mine.shape.dims[d] % static_cast<int64_t>(g) != 0 || result_shapes[leaf].dims != mine.shape.dims) {
      return error(inst, fmt::format("dimension {} of {} does not split into {} equal chunks", dim,
                                     hlo::to_string(mine.shape), g));
    }
    int64_t outer = 1, inner = 1;
    for (size_t k = 0; k < d; ++k) outer *= mine.shape.dims[k];
    for (size_t k = d + 1; k < mine.shape.dims.size(); ++k) inner *= mine.shape.dims[k];
    const int64_t chunk = mine.shape.dims[d] / static_cast<int64_t>(g) * inner;  // elements per chunk row
    const int64_t row = mine.shape.dims[d] * inner;
    Literal result{result_shapes[leaf], std::vector<double>(mine.values.size())};
    for (size_t i = 0; i < g; ++i) {
      const Literal& from = (*inputs[i])[leaf];
      if (from.values.size() != mine.values.size()) return error(inst, "members contribute different shapes");
      for (int64_t o = 0; o < outer; ++o) {
        const auto src = from.values.begin() + o * row + static_cast<int64_t>(me) * chunk;
        std::copy(src, src + chunk, result.values.begin() + o * row + static_cast<int64_t>(i) * chunk);
      }
    }
    out.push_back(std::move(result));
  }
  return out;
}

}  // namespace sl::exec::cpu
