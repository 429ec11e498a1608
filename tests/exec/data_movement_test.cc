// gather, scatter, pad, reverse, reduce-window, select-and-scatter, sort and
// topk against values worked out by hand from XLA's operation semantics.
// The instructions are built in code, so these test the evaluator's ops
// whatever the parser fills in.

#include <gtest/gtest.h>

#include <cmath>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/ops.h"
#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;
using V = std::vector<double>;

Literal lit(PrimitiveType t, std::vector<int64_t> dims, V values) { return Literal{Shape::array(t, std::move(dims)), std::move(values)}; }

hlo::Instruction inst_of(hlo::Opcode op, Shape shape) {
  hlo::Instruction i;
  i.name = "x";
  i.opcode = op;
  i.shape = std::move(shape);
  return i;
}

cpu::Combiner add_combiner() {
  return [](std::vector<double>& a, const std::vector<double>& x) {
    a[0] += x[0];
    return ok_status();
  };
}

cpu::Combiner max_combiner() {
  return [](std::vector<double>& a, const std::vector<double>& x) {
    a[0] = std::max(a[0], x[0]);
    return ok_status();
  };
}

TEST(DataMovement, GatherRowsWithClampedStarts) {
  // operand 3x3, gather rows by index: jnp.take(x, [2, 0, 5], axis=0); 5 clamps to 2.
  Literal operand = lit(PrimitiveType::kF32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Literal indices = lit(PrimitiveType::kS32, {3}, {2, 0, 5});
  auto g = inst_of(hlo::Opcode::kGather, Shape::array(PrimitiveType::kF32, {3, 3}));
  g.gather.offset_dims = {1};
  g.gather.collapsed_slice_dims = {0};
  g.gather.start_index_map = {0};
  g.gather.index_vector_dim = 1;
  g.gather.slice_sizes = {1, 3};
  auto out = cpu::eval_gather(g, operand, indices);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->values, (V{7, 8, 9, 1, 2, 3, 7, 8, 9}));
}

TEST(DataMovement, GatherWindowsWithIndexVectors) {
  // 2-D starts [[0,1],[1,0]], 2x2 windows kept whole: offset_dims={1,2}.
  Literal operand = lit(PrimitiveType::kS32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Literal indices = lit(PrimitiveType::kS32, {2, 2}, {0, 1, 1, 0});
  auto g = inst_of(hlo::Opcode::kGather, Shape::array(PrimitiveType::kS32, {2, 2, 2}));
  g.gather.offset_dims = {1, 2};
  g.gather.start_index_map = {0, 1};
  g.gather.index_vector_dim = 1;
  g.gather.slice_sizes = {2, 2};
  auto out = cpu::eval_gather(g, operand, indices);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->values, (V{2, 3, 5, 6, 4, 5, 7, 8}));
}

TEST(DataMovement, ScatterAddsInUpdateOrderAndSkipsOutOfBounds) {
  // x.at[[1, 3, 1, 7]].add([10, 20, 30, 40]) on zeros(5): 7 is out of bounds.
  Literal operand = lit(PrimitiveType::kF32, {5}, {0, 0, 0, 0, 0});
  Literal indices = lit(PrimitiveType::kS32, {4, 1}, {1, 3, 1, 7});
  Literal updates = lit(PrimitiveType::kF32, {4}, {10, 20, 30, 40});
  auto s = inst_of(hlo::Opcode::kScatter, operand.shape);
  s.scatter.inserted_window_dims = {0};
  s.scatter.scatter_dims_to_operand_dims = {0};
  s.scatter.index_vector_dim = 1;
  auto out = cpu::eval_scatter(s, {&operand, &indices, &updates}, add_combiner());
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].values, (V{0, 40, 0, 20, 0}));
  // A replacing combiner keeps the last update to an index.
  cpu::Combiner assign = [](std::vector<double>& a, const std::vector<double>& x) {
    a[0] = x[0];
    return ok_status();
  };
  out = cpu::eval_scatter(s, {&operand, &indices, &updates}, assign);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].values, (V{0, 30, 0, 20, 0}));
}

TEST(DataMovement, ScatterRowWindows) {
  // Rows: operand 3x2, updates 2x2 into rows [2, 0].
  Literal operand = lit(PrimitiveType::kS32, {3, 2}, {1, 1, 1, 1, 1, 1});
  Literal indices = lit(PrimitiveType::kS32, {2}, {2, 0});
  Literal updates = lit(PrimitiveType::kS32, {2, 2}, {5, 6, 7, 8});
  auto s = inst_of(hlo::Opcode::kScatter, operand.shape);
  s.scatter.update_window_dims = {1};
  s.scatter.inserted_window_dims = {0};
  s.scatter.scatter_dims_to_operand_dims = {0};
  s.scatter.index_vector_dim = 1;
  auto out = cpu::eval_scatter(s, {&operand, &indices, &updates}, add_combiner());
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].values, (V{8, 9, 1, 1, 6, 7}));
}

TEST(DataMovement, PadWithInteriorAndNegativeEdges) {
  Literal operand = lit(PrimitiveType::kF32, {3}, {1, 2, 3});
  Literal zero = lit(PrimitiveType::kF32, {}, {0});
  auto p = inst_of(hlo::Opcode::kPad, Shape::array(PrimitiveType::kF32, {7}));
  p.padding = {{1, 1, 1}};  // 0 1 0 2 0 3 0
  auto out = cpu::eval_pad(p, operand, zero);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->values, (V{0, 1, 0, 2, 0, 3, 0}));
  p.shape = Shape::array(PrimitiveType::kF32, {4});
  p.padding = {{-1, 0, 1}};  // 1 0 2 0 3 without its first element
  out = cpu::eval_pad(p, operand, zero);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->values, (V{0, 2, 0, 3}));
  Literal m = lit(PrimitiveType::kS32, {2, 2}, {1, 2, 3, 4});
  Literal nine = lit(PrimitiveType::kS32, {}, {9});
  p.shape = Shape::array(PrimitiveType::kS32, {3, 2});
  p.padding = {{1, 0, 0}, {-1, 1, 0}};
  out = cpu::eval_pad(p, m, nine);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->values, (V{9, 9, 2, 9, 4, 9}));
}

TEST(DataMovement, Reverse) {
  Literal m = lit(PrimitiveType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto r = inst_of(hlo::Opcode::kReverse, m.shape);
  r.dimensions = {1};
  auto out = cpu::eval_reverse(r, m);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(out->values, (V{3, 2, 1, 6, 5, 4}));
  r.dimensions = {0, 1};
  out = cpu::eval_reverse(r, m);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(out->values, (V{6, 5, 4, 3, 2, 1}));
}

TEST(DataMovement, ReduceWindowStridesPaddingDilation) {
  Literal x = lit(PrimitiveType::kF32, {5}, {1, 2, 3, 4, 5});
  Literal zero = lit(PrimitiveType::kF32, {}, {0});
  // size 2 stride 2, pad 1 low 0 high: windows [pad,1] [2,3] [4,5].
  auto rw = inst_of(hlo::Opcode::kReduceWindow, Shape::array(PrimitiveType::kF32, {3}));
  rw.window = {{2, 2, 1, 0, 1, 1, false}};
  auto out = cpu::eval_reduce_window(rw, {&x, &zero}, {rw.shape}, add_combiner());
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].values, (V{1, 5, 9}));
  // Window dilation 2, size 2: pairs (0,2) (1,3) (2,4).
  rw.window = {{2, 1, 0, 0, 1, 2, false}};
  out = cpu::eval_reduce_window(rw, {&x, &zero}, {rw.shape}, add_combiner());
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].values, (V{4, 6, 8}));
  // Base dilation 2 (1 _ 2 _ 3 _ 4 _ 5: 9 positions), size 3 stride 3: {1,2} {3} {4,5}.
  rw.window = {{3, 3, 0, 0, 2, 1, false}};
  out = cpu::eval_reduce_window(rw, {&x, &zero}, {rw.shape}, add_combiner());
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].values, (V{3, 3, 9}));
  // Cumulative max as JAX writes it: size 5, pad 4 low.
  Literal y = lit(PrimitiveType::kF32, {5}, {3, 1, 4, 1, 5});
  Literal ninf = lit(PrimitiveType::kF32, {}, {-INFINITY});
  rw.shape = Shape::array(PrimitiveType::kF32, {5});
  rw.window = {{5, 1, 4, 0, 1, 1, false}};
  out = cpu::eval_reduce_window(rw, {&y, &ninf}, {rw.shape}, max_combiner());
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].values, (V{3, 3, 4, 4, 5}));
}

// High padding on an inner dimension: the window past the row's end reads the
// padding, not the next row's first element (row-major neighbours).
TEST(DataMovement, ReduceWindowHighPaddingStaysInItsRow) {
  Literal x = lit(PrimitiveType::kF32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Literal zero = lit(PrimitiveType::kF32, {}, {0});
  // Dimension 1: size 2 stride 2, 1 high: windows [a0,a1] [a2,pad] per row.
  auto rw = inst_of(hlo::Opcode::kReduceWindow, Shape::array(PrimitiveType::kF32, {3, 2}));
  rw.window = {{1, 1, 0, 0, 1, 1, false}, {2, 2, 0, 1, 1, 1, false}};
  auto out = cpu::eval_reduce_window(rw, {&x, &zero}, {rw.shape}, add_combiner());
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].values, (V{3, 3, 9, 6, 15, 9}));
}

TEST(DataMovement, SelectAndScatterRoutesToTheMax) {
  // Max-pool gradient: windows of 2, stride 2 over [1, 5, 3, 2]: maxima at 1 and 2.
  Literal x = lit(PrimitiveType::kF32, {4}, {1, 5, 3, 2});
  Literal src = lit(PrimitiveType::kF32, {2}, {10, 20});
  Literal zero = lit(PrimitiveType::kF32, {}, {0});
  auto s = inst_of(hlo::Opcode::kSelectAndScatter, x.shape);
  s.window = {{2, 2, 0, 0, 1, 1, false}};
  cpu::Combiner ge = [](std::vector<double>& a, const std::vector<double>& b) {
    a[0] = a[0] >= b[0] ? 1 : 0;
    return ok_status();
  };
  auto out = cpu::eval_select_and_scatter(s, {&x, &src, &zero}, ge, add_combiner());
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->values, (V{0, 10, 20, 0}));
}

TEST(DataMovement, SortVariadicByKeyIsStable) {
  Literal keys = lit(PrimitiveType::kF32, {2, 3}, {3, 1, 3, 0, -1, 0});
  Literal vals = lit(PrimitiveType::kS32, {2, 3}, {0, 1, 2, 0, 1, 2});
  auto s = inst_of(hlo::Opcode::kSort, Shape::tuple({keys.shape, vals.shape}));
  s.dimensions = {1};
  cpu::Comparator less = [](const std::vector<double>& a, const std::vector<double>& b) -> Result<bool> {
    return a[0] < b[0];
  };
  auto out = cpu::eval_sort(s, {&keys, &vals}, less);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].values, (V{1, 3, 3, -1, 0, 0}));
  EXPECT_EQ((*out)[1].values, (V{1, 0, 2, 1, 0, 2}));
  s.dimensions = {0};
  out = cpu::eval_sort(s, {&keys, &vals}, less);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].values, (V{0, -1, 0, 3, 1, 3}));
}

TEST(DataMovement, TopK) {
  Literal x = lit(PrimitiveType::kF32, {2, 4}, {1, 4, 4, 2, -1, NAN, 3, 0});
  auto t = inst_of(hlo::Opcode::kTopK, Shape::tuple({Shape::array(PrimitiveType::kF32, {2, 2}),
                                                     Shape::array(PrimitiveType::kS32, {2, 2})}));
  t.k = 2;
  t.largest = true;
  auto out = cpu::eval_topk(t, x, {t.shape.elements[0], t.shape.elements[1]});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].values[0], 4);
  EXPECT_EQ((*out)[0].values[1], 4);
  EXPECT_TRUE(std::isnan((*out)[0].values[2]));
  EXPECT_EQ((*out)[0].values[3], 3);
  EXPECT_EQ((*out)[1].values, (V{1, 2, 1, 2}));
  t.largest = false;
  out = cpu::eval_topk(t, x, {t.shape.elements[0], t.shape.elements[1]});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].values, (V{1, 2, -1, 0}));
  EXPECT_EQ((*out)[1].values, (V{0, 3, 0, 3}));
}

TEST(DataMovement, SortThroughTheEvaluator) {
  auto r = testing::run_hlo(R"(HloModule t
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY main {
  x = f32[4] constant({3, 1, 4, 2})
  ROOT s = f32[4] sort(x), dimensions={0}, to_apply=lt
})");
  EXPECT_EQ(testing::values_of(r), (V{4, 3, 2, 1}));
}

}  // namespace
}  // namespace sl::exec

namespace sl::exec {
namespace {

TEST(DataMovement, BitcastBetweenLayoutsMovesElements) {
  // f32[3,2]{0,1} holds [[1,2],[3,4],[5,6]] column-major: buffer 1 3 5 2 4 6,
  // which f32[2,3]{1,0} reads as its transpose.
  Literal x = lit(PrimitiveType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6});
  Literal t = cpu::bitcast_between_layouts(x, {0, 1}, Shape::array(PrimitiveType::kF32, {2, 3}), {1, 0});
  EXPECT_EQ(t.values, (V{1, 3, 5, 2, 4, 6}));
  // Row-major on both sides is a reshape.
  Literal r = cpu::bitcast_between_layouts(x, {}, Shape::array(PrimitiveType::kF32, {6}), {});
  EXPECT_EQ(r.values, (V{1, 2, 3, 4, 5, 6}));
}

}  // namespace
}  // namespace sl::exec
