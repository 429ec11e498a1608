// Compute ops: reduce (with its to_apply), dot (result from the dimension
// numbers), fusion (called computation's signature), custom-call (GEMM
// operands).

#include <fmt/format.h>

#include <set>

#include "core/hlo/shape_inference.h"
#include "core/hlo/verify_context.h"

namespace sl::hlo::verify_detail {
namespace {

void verify_reduce(const Site& site) {
  if (site.operand_count() < 2 || site.operand_count() % 2 != 0) {
    site.error(fmt::format("reduce takes inputs and as many init values (an even number of operands), but has {}",
                           site.operand_count()));
    return;
  }
  const size_t n = site.operand_count() / 2;
  for (size_t i = 0; i < site.operand_count(); ++i) {
    if (!expect_array_operand(site, i)) return;
  }
  const Shape& first = site.operand_shape(0);
  for (size_t i = 0; i < n; ++i) {
    const Shape& input = site.operand_shape(i);
    if (input.dims != first.dims) {
      site.error(fmt::format("reduce input {} ({}) must have the dimensions of input 0 ({})", i, str(input),
                             str(first)));
      return;
    }
    const Shape& init = site.operand_shape(n + i);
    if (init != Shape::array(input.type, {})) {
      site.error(fmt::format("reduce init value {} must be a {}[] scalar, but is {}", i,
                             primitive_type_name(input.type), str(init)));
      return;
    }
  }
  std::set<int64_t> reduced;
  for (int64_t d : site.inst.dimensions) {
    if (d < 0 || d >= first.rank()) {
      site.error(fmt::format("reduce dimension {} is out of range for input {} of rank {}", d, str(first),
                             first.rank()));
      return;
    }
    if (!reduced.insert(d).second) {
      site.error(fmt::format("reduce dimension {} is listed more than once", d));
      return;
    }
  }
  std::vector<Shape> results;
  for (size_t i = 0; i < n; ++i) {
    Shape out = Shape::array(site.operand_shape(i).type, {});
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (!reduced.count(d)) out.dims.push_back(first.dims[static_cast<size_t>(d)]);
    }
    results.push_back(std::move(out));
  }
  const Computation* callee = called_computation(site, 0, "to_apply");
  if (callee != nullptr) {
    if (n == 1) {
      expect_reducer(site, *callee, first.type, "the input");
    } else {
      std::vector<const Shape*> args;
      std::vector<Shape> scalars;
      scalars.reserve(2 * n);
      for (size_t k = 0; k < 2 * n; ++k) scalars.push_back(Shape::array(site.operand_shape(k % n).type, {}));
      for (const Shape& s : scalars) args.push_back(&s);
      expect_arguments(site, *callee, args, "to_apply");
    }
  }
  expect_shape(site, n == 1 ? results[0] : Shape::tuple(std::move(results)));
}

void verify_dot(const Site& site) {
  if (!expect_operand_count(site, 2) || !expect_array_operand(site, 0) || !expect_array_operand(site, 1)) return;
  if (!site.inst.shape.is_array()) {
    site.error(fmt::format("dot must produce an array, but its shape is {}", str(site.inst.shape)));
    return;
  }
  Result<Shape> expected =
      infer_dot_shape(site.operand_shape(0), site.operand_shape(1), site.inst.dot, site.inst.shape.type);
  if (!expected) {
    site.error(fmt::format("dot {}", expected.status().message()));
    return;
  }
  expect_shape(site, *expected);
}

void verify_fusion(const Site& site) {
  const Computation* callee = called_computation(site, 0, "calls");
  if (callee == nullptr) return;
  expect_arguments(site, *callee, site.operand_shapes(), "fused");
  const Shape* root = root_shape(*callee);
  if (root != nullptr && *root != site.inst.shape) {
    site.error(fmt::format("fusion shape {} does not match the root of fused computation %{}, {}",
                           str(site.inst.shape), callee->name, str(*root)));
  }
}

// cuBLAS GEMM custom-calls: lhs and rhs arrays; the result is the output,
// optionally in a tuple with the s8 workspace.
void verify_custom_call(const Site& site) {
  if (site.inst.custom_call_target != "__cublas$gemm" && site.inst.custom_call_target != "__cublas$lt$matmul") {
    return;
  }
  if (!expect_min_operand_count(site, 2) || !expect_array_operand(site, 0) || !expect_array_operand(site, 1)) return;
  const Shape& shape = site.inst.shape;
  const bool ok = shape.is_array() || (shape.is_tuple() && !shape.elements.empty() && shape.elements[0].is_array());
  if (!ok) {
    site.error(fmt::format("GEMM custom-call must produce an array or (array, s8[workspace]), but its shape is {}",
                           str(shape)));
  }
}

}  // namespace

void verify_compute(const Site& site) {
  switch (site.inst.opcode) {
    case Opcode::kReduce: verify_reduce(site); return;
    case Opcode::kDot: verify_dot(site); return;
    case Opcode::kFusion: verify_fusion(site); return;
    case Opcode::kCustomCall: verify_custom_call(site); return;
    default: return;
  }
}

}  // namespace sl::hlo::verify_detail
