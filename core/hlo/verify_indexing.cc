// Indexing, window and ordering ops: gather and scatter (shapes from their
// dimension numbers), pad, reverse, reduce-window, select-and-scatter, map,
// sort (variadic) and topk, as XLA's shape inference derives them.

#include <fmt/format.h>

#include <set>

#include "core/hlo/shape_inference.h"
#include "core/hlo/verify_context.h"

namespace sl::hlo::verify_detail {
namespace {

Shape one_or_tuple(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::tuple(std::move(shapes));
}

bool all_arrays(const Site& site) {
  for (size_t i = 0; i < site.operand_count(); ++i) {
    if (!expect_array_operand(site, i)) return false;
  }
  return true;
}

void report_inference(const Site& site, const Status& status) {
  site.error(fmt::format("{} {}", written_opcode(site.inst), status.message()));
}

void verify_gather(const Site& site) {
  if (!expect_operand_count(site, 2) || !all_arrays(site)) return;
  Result<Shape> expected = infer_gather_shape(site.operand_shape(0), site.operand_shape(1), site.inst.gather);
  if (!expected) {
    report_inference(site, expected.status());
    return;
  }
  expect_shape(site, *expected);
}

void verify_scatter(const Site& site) {
  if (site.operand_count() < 3 || site.operand_count() % 2 == 0) {
    site.error(fmt::format("scatter takes N operands, the scatter indices and N updates (an odd number, at least "
                           "3), but has {}",
                           site.operand_count()));
    return;
  }
  if (!all_arrays(site)) return;
  const size_t n = (site.operand_count() - 1) / 2;
  const Shape& indices = site.operand_shape(n);
  if (!is_integral(indices.type)) {
    site.error(fmt::format("scatter indices must be integers, but are {}", str(indices)));
    return;
  }
  std::vector<Shape> results;
  for (size_t i = 0; i < n; ++i) results.push_back(site.operand_shape(i));
  const ScatterDims& dims = site.inst.scatter;
  const int64_t rank = site.operand_shape(0).rank();
  for (int64_t d : dims.inserted_window_dims) {
    if (d < 0 || d >= rank) {
      site.error(fmt::format("scatter inserted_window_dims names dimension {}, out of range for rank {}", d, rank));
      return;
    }
  }
  for (int64_t d : dims.scatter_dims_to_operand_dims) {
    if (d < 0 || d >= rank) {
      site.error(fmt::format("scatter scatter_dims_to_operand_dims names dimension {}, out of range for rank {}", d,
                             rank));
      return;
    }
  }
  if (dims.index_vector_dim < 0 || dims.index_vector_dim > indices.rank()) {
    site.error(fmt::format("scatter index_vector_dim {} is out of range for indices of rank {}", dims.index_vector_dim,
                           indices.rank()));
    return;
  }
  if (const Computation* callee = called_computation(site, 0, "to_apply")) {
    std::vector<Shape> scalars;
    for (size_t k = 0; k < 2 * n; ++k) scalars.push_back(Shape::array(site.operand_shape(k % n).type, {}));
    std::vector<const Shape*> args;
    for (const Shape& s : scalars) args.push_back(&s);
    expect_arguments(site, *callee, args, "to_apply");
  }
  expect_shape(site, one_or_tuple(std::move(results)));
}

void verify_pad(const Site& site) {
  if (!expect_operand_count(site, 2) || !all_arrays(site)) return;
  const Shape& value = site.operand_shape(1);
  if (value.rank() != 0 || value.type != site.operand_shape(0).type) {
    site.error(fmt::format("pad value {} must be a {}[] scalar", str(value),
                           primitive_type_name(site.operand_shape(0).type)));
    return;
  }
  Result<Shape> expected = infer_pad_shape(site.operand_shape(0), site.inst.padding);
  if (!expected) {
    report_inference(site, expected.status());
    return;
  }
  expect_shape(site, *expected);
}

void verify_reverse(const Site& site) {
  if (!expect_operand_count(site, 1) || !all_arrays(site)) return;
  const Shape& in = site.operand_shape(0);
  std::set<int64_t> seen;
  for (int64_t d : site.inst.dimensions) {
    if (d < 0 || d >= in.rank() || !seen.insert(d).second) {
      site.error(fmt::format("reverse dimension {} is out of range or repeated for {}", d, str(in)));
      return;
    }
  }
  expect_shape(site, in);
}

// reduce-window: N inputs and N scalar inits; each result has the window's dims.
void verify_reduce_window(const Site& site) {
  if (site.operand_count() < 2 || site.operand_count() % 2 != 0) {
    site.error(fmt::format("reduce-window takes inputs and as many init values (an even number of operands), but "
                           "has {}",
                           site.operand_count()));
    return;
  }
  if (!all_arrays(site)) return;
  const size_t n = site.operand_count() / 2;
  const Shape& first = site.operand_shape(0);
  Result<std::vector<int64_t>> dims = infer_window_dims(first.dims, site.inst.window);
  if (!dims) {
    report_inference(site, dims.status());
    return;
  }
  std::vector<Shape> results;
  for (size_t i = 0; i < n; ++i) {
    const Shape& input = site.operand_shape(i);
    if (input.dims != first.dims) {
      site.error(fmt::format("reduce-window input {} ({}) must have the dimensions of input 0 ({})", i, str(input),
                             str(first)));
      return;
    }
    if (site.operand_shape(n + i).rank() != 0) {
      site.error(fmt::format("reduce-window init value {} must be a scalar, but is {}", i,
                             str(site.operand_shape(n + i))));
      return;
    }
    results.push_back(Shape::array(input.type, *dims));
  }
  if (const Computation* callee = called_computation(site, 0, "to_apply"); callee != nullptr && n == 1) {
    expect_reducer(site, *callee, first.type, "the input");
  }
  expect_shape(site, one_or_tuple(std::move(results)));
}

// select-and-scatter(operand, source, init): the result is the operand's shape,
// the source has the window's dims.
void verify_select_and_scatter(const Site& site) {
  if (!expect_operand_count(site, 3) || !all_arrays(site)) return;
  const Shape& operand = site.operand_shape(0);
  Result<std::vector<int64_t>> dims = infer_window_dims(operand.dims, site.inst.window);
  if (!dims) {
    report_inference(site, dims.status());
    return;
  }
  if (site.operand_shape(1).dims != *dims) {
    site.error(fmt::format("select-and-scatter source {} must have the window's dimensions {}",
                           str(site.operand_shape(1)), str(Shape::array(site.operand_shape(1).type, *dims))));
    return;
  }
  expect_shape(site, operand);
}

void verify_map(const Site& site) {
  if (!expect_min_operand_count(site, 1) || !all_arrays(site)) return;
  const Shape& first = site.operand_shape(0);
  for (size_t i = 1; i < site.operand_count(); ++i) {
    if (site.operand_shape(i).dims != first.dims) {
      site.error(fmt::format("map operand {} ({}) must have the dimensions of operand 0 ({})", i,
                             str(site.operand_shape(i)), str(first)));
      return;
    }
  }
  const Shape& out = site.inst.shape;
  if (!out.is_array() || out.dims != first.dims) {
    site.error(fmt::format("map result {} must have the dimensions of its operands {}", str(out), str(first)));
  }
}

// sort: operands of one dimension list, sorted along `dimensions={d}`; the
// comparator takes two scalars per operand and returns pred[].
void verify_sort(const Site& site) {
  if (!expect_min_operand_count(site, 1) || !all_arrays(site)) return;
  const Shape& first = site.operand_shape(0);
  std::vector<Shape> results;
  for (size_t i = 0; i < site.operand_count(); ++i) {
    if (site.operand_shape(i).dims != first.dims) {
      site.error(fmt::format("sort operand {} ({}) must have the dimensions of operand 0 ({})", i,
                             str(site.operand_shape(i)), str(first)));
      return;
    }
    results.push_back(site.operand_shape(i));
  }
  if (site.inst.dimensions.size() != 1 || site.inst.dimensions[0] < 0 ||
      (first.rank() > 0 && site.inst.dimensions[0] >= first.rank())) {
    site.error(fmt::format("sort needs one dimension in [0, {}) (dimensions={{d}})", first.rank()));
    return;
  }
  if (const Computation* callee = called_computation(site, 0, "to_apply")) {
    std::vector<Shape> scalars;
    for (size_t k = 0; k < 2 * site.operand_count(); ++k) {
      scalars.push_back(Shape::array(site.operand_shape(k / 2).type, {}));
    }
    std::vector<const Shape*> args;
    for (const Shape& s : scalars) args.push_back(&s);
    expect_arguments(site, *callee, args, "comparator");
    const Shape* root = root_shape(*callee);
    if (root != nullptr && *root != Shape::array(PrimitiveType::kPred, {})) {
      site.error(fmt::format("sort comparator %{} must return pred[], but returns {}", callee->name, str(*root)));
    }
  }
  expect_shape(site, one_or_tuple(std::move(results)));
}

// topk: (values, s32 indices), the last dimension cut to k.
void verify_topk(const Site& site) {
  if (!expect_operand_count(site, 1) || !all_arrays(site)) return;
  const Shape& in = site.operand_shape(0);
  if (in.rank() == 0) {
    site.error("topk needs an operand of rank >= 1");
    return;
  }
  const int64_t k = site.inst.k.value_or(-1);
  if (k < 0 || k > in.dims.back()) {
    site.error(fmt::format("topk k={} must be in [0, {}] (the last dimension of {})", k, in.dims.back(), str(in)));
    return;
  }
  Shape values = in;
  values.dims.back() = k;
  Shape indices = Shape::array(PrimitiveType::kS32, values.dims);
  expect_shape(site, Shape::tuple({values, indices}));
}

}  // namespace

void verify_indexing(const Site& site) {
  switch (site.inst.opcode) {
    case Opcode::kGather: verify_gather(site); return;
    case Opcode::kScatter: verify_scatter(site); return;
    case Opcode::kPad: verify_pad(site); return;
    case Opcode::kReverse: verify_reverse(site); return;
    case Opcode::kReduceWindow: verify_reduce_window(site); return;
    case Opcode::kSelectAndScatter: verify_select_and_scatter(site); return;
    case Opcode::kMap: verify_map(site); return;
    case Opcode::kSort: verify_sort(site); return;
    case Opcode::kTopK: verify_topk(site); return;
    default: return;
  }
}

}  // namespace sl::hlo::verify_detail
