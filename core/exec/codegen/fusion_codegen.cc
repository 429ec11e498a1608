// One kernel per kLoop / kInput fusion (fusion_codegen.h).

#include "core/exec/codegen/fusion_codegen.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/exec/codegen/codegen_types.h"
#include "core/exec/codegen/elemental.h"

namespace sl::exec::codegen {

using hlo::Opcode;

bool generates_kind(const std::string& fusion_kind) { return fusion_kind == "kLoop" || fusion_kind == "kInput"; }

std::string identifier(const std::string& name) {
  std::string out;
  for (char ch : name) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  return out;
}

int64_t GeneratedKernel::blocks(int sm_count) const {
  int64_t threads = 1;
  for (const KernelOutput& l : loops) threads = std::max(threads, l.threads);
  const int64_t cap = std::max<int64_t>(1, static_cast<int64_t>(sm_count) * 16);
  return std::clamp<int64_t>((threads + kBlockThreads - 1) / kBlockThreads, 1, cap);
}

namespace {

constexpr int kColumnRows = kBlockThreads / 32;
// Elementwise loops of at least kUnrolledElements elements run kUnroll
// elements per thread and iteration (XLA's loop emitter unrolls by 4 too).
constexpr int kUnroll = 4;
constexpr int64_t kUnrolledElements = int64_t{1} << 20;

// The reduce an output is (or reads at its own index through bitcasts,
// converts and elementwise ops), so the output's loop can be the reduce's.
std::optional<int> driving_reduce(const hlo::Computation& c, int k, int64_t elements, std::set<int>& seen) {
  if (!seen.insert(k).second) return std::nullopt;  // a DAG: each instruction once
  const hlo::Instruction& inst = c.instructions[static_cast<size_t>(k)];
  if (!inst.shape.is_array() || inst.shape.element_count() != elements) return std::nullopt;
  if (inst.opcode == Opcode::kReduce) return k;
  const bool same_index = inst.opcode == Opcode::kBitcast || inst.opcode == Opcode::kReshape ||
                          inst.opcode == Opcode::kCopy || hlo::is_elementwise(inst.opcode);
  if (!same_index) return std::nullopt;
  for (int o : inst.operands) {
    if (auto r = driving_reduce(c, o, elements, seen)) return r;
  }
  return std::nullopt;
}

// A reduce over one contiguous block of dimensions [first, last]:
// operand = [outer, reduced, inner] in row-major order.
struct ReduceShape {
  int64_t outer = 1, reduced = 1, inner = 1;
};

std::optional<ReduceShape> contiguous(const hlo::Instruction& reduce, const hlo::Shape& operand) {
  if (reduce.dimensions.empty()) return std::nullopt;
  std::vector<int64_t> dims = reduce.dimensions;
  std::sort(dims.begin(), dims.end());
  for (size_t q = 1; q < dims.size(); ++q) {
    if (dims[q] != dims[q - 1] + 1) return std::nullopt;
  }
  ReduceShape s;
  for (size_t d = 0; d < operand.dims.size(); ++d) {
    const auto di = static_cast<int64_t>(d);
    (di < dims.front() ? s.outer : (di > dims.back() ? s.inner : s.reduced)) *= operand.dims[d];
  }
  return s;
}

struct Output {
  int instruction = 0;
  hlo::PrimitiveType type = hlo::PrimitiveType::kF32;
  int64_t elements = 0;
  const hlo::Shape* layout = nullptr;  // store in this shape's memory order; null: row-major
};

std::string store_at(const Output& out, const std::string& index) {
  return out.layout == nullptr ? index : physical_index(*out.layout, index);
}

// One thread per element for every output of `group` (outputs of one
// element count share a loop, so they share their common values). Threads
// walk the first output's memory order (`q`), so its stores, and the loads
// of operands laid out alike, are coalesced whatever the layout; `i` is the
// element's row-major index.
Result<std::string> elementwise_loop(Elemental& e, const std::vector<Output>& outputs, const std::vector<int>& group) {
  Scope body;
  body.indent = "    ";
  const Output& first = outputs[static_cast<size_t>(group[0])];
  const bool by_layout = first.layout != nullptr && !first.layout->is_row_major();
  const std::string var = by_layout ? "q" : "i";
  if (by_layout) body.line(fmt::format("const IX i = {};", logical_index(*first.layout, "q")));
  for (int k : group) {
    const Output& out = outputs[static_cast<size_t>(k)];
    SL_ASSIGN_OR_RETURN(std::string v, e.value(out.instruction, "i", body));
    const bool same_order = by_layout && out.layout != nullptr && out.layout->dims == first.layout->dims &&
                            out.layout->minor_to_major == first.layout->minor_to_major;
    body.line(fmt::format("o{}[{}] = {};", k, same_order ? "q" : store_at(out, "i"), store_value(out.type, v)));
  }
  const std::string n = ix(first.elements);
  if (first.elements < kUnrolledElements) {
    return fmt::format("  for (IX {v} = tid; {v} < {n}; {v} += nthreads) {{\n{body}  }}\n", fmt::arg("v", var),
                       fmt::arg("n", n), fmt::arg("body", body.code));
  }
  // Large loops: kUnroll elements a thread apart per iteration, so each thread
  // has that many independent loads in flight (the __restrict__ pointers let
  // the loads of later elements go before earlier stores), then the rest.
  return fmt::format(
      "  IX i0 = tid;\n"
      "  for (; i0 + {u1} * nthreads < {n}; i0 += {u} * nthreads) {{\n"
      "#pragma unroll\n"
      "   for (IX u = 0; u < {u}; ++u) {{\n"
      "    const IX {v} = i0 + u * nthreads;\n{body}   }}\n"
      "  }}\n"
      "  for (IX {v} = i0; {v} < {n}; {v} += nthreads) {{\n{body}  }}\n",
      fmt::arg("u", kUnroll), fmt::arg("u1", kUnroll - 1), fmt::arg("n", n), fmt::arg("v", var),
      fmt::arg("body", body.code));
}

// The output at index `o` once `acc` holds its reduce's value there.
Result<std::string> store_output(Elemental& e, const Output& out, int k, int r, const std::string& acc,
                                 const Scope& parent) {
  Scope s = parent.child();
  Elemental::define(s, r, "o", acc);
  SL_ASSIGN_OR_RETURN(std::string v, e.value(out.instruction, "o", s));
  s.line(fmt::format("o{}[{}] = {};", k, store_at(out, "o"), store_value(out.type, v)));
  return s.code;
}

// A thread's loop over its elements `r` of `count` (first, first + step,
// ...: a lane over its row, a tile row over its columns' reduced elements),
// with a constant trip count so that the compiler unrolls it and a thread
// has up to 8 loads in flight (a loop bounded by `r < count` unrolls into a
// remainder loop that short rows never leave). `element` is the body's
// scope; close_strided_loop appends it.
void open_strided_loop(Scope& scope, Scope& element, int64_t count, const char* first, int64_t step) {
  const int64_t trips = (count + step - 1) / step;
  scope.line(fmt::format("#pragma unroll {}", std::min<int64_t>(trips, 8)));
  scope.line(fmt::format("for (IX it = 0; it < {}; ++it) {{", ix(trips)));
  element.line(fmt::format("const IX r = {} + it * {};", first, step));
  if (count % step != 0) element.line(fmt::format("if (r < {}) {{", ix(count)));
}

void close_strided_loop(Scope& scope, Scope& element, int64_t count, int64_t step) {
  if (count % step != 0) element.line("}");
  scope.code += element.code;
  scope.line("}");
}

void open_lane_loop(Scope& scope, Scope& element, int64_t row) { open_strided_loop(scope, element, row, "lane", 32); }
void close_lane_loop(Scope& scope, Scope& element, int64_t row) { close_strided_loop(scope, element, row, 32); }

// The reduces of `loop` for the row at `base` (elements base + r), each into
// a register every lane of the warp holds, and bound in `e` (row_local.h).
Status warp_reduces(Elemental& e, const hlo::Computation& c, const RowLoop& loop, int64_t row, Scope& scope) {
  for (int k : loop.reduces) {
    const hlo::Instruction& reduce = c.instructions[static_cast<size_t>(k)];
    SL_ASSIGN_OR_RETURN(std::string red, e.reducer(reduce));
    SL_ASSIGN_OR_RETURN(TypeNames t, type_names(reduce.shape.type));
    SL_ASSIGN_OR_RETURN(std::string init, e.value(reduce.operands[1], ix(0), scope));
    const std::string acc = e.fresh("w"), first = e.fresh("wf");
    scope.line(fmt::format("{} {} = {}; bool {} = lane != 0;", t.compute, acc, init, first));
    Scope element = scope.child();
    open_lane_loop(scope, element, row);
    SL_ASSIGN_OR_RETURN(std::string x, e.value(reduce.operands[0], e.index("base + r", element), element));
    element.line(fmt::format("{0} = {1} ? {2} : {3}({0}, {2}); {1} = false;", acc, first, x, red));
    close_lane_loop(scope, element, row);
    scope.line(fmt::format("for (int s = 16; s > 0; s >>= 1) {0} = {1}({0}, ({2})sl_shfl({0}, s));", acc, red,
                           t.compute));
    e.bind(k, acc);
  }
  return ok_status();
}

std::string warp_per_row(int64_t rows, const std::string& body) {
  return fmt::format(
      "  {{ const IX lane = threadIdx.x & 31; const IX nwarps = nthreads >> 5;\n"
      "    for (IX o = tid >> 5; o < {}; o += nwarps) {{\n{}    }}\n  }}\n",
      ix(rows), body);
}

// A warp per output element: the reduce `r` over its row (with the reduces
// nested in it that `loop` binds), lane 0 storing.
Result<std::string> row_loop(Elemental& e, const hlo::Computation& c, const Output& out, int k, int r,
                             const ReduceShape& shape, const RowLoop& loop) {
  const hlo::Instruction& reduce = c.instructions[static_cast<size_t>(r)];
  SL_ASSIGN_OR_RETURN(std::string red, e.reducer(reduce));
  SL_ASSIGN_OR_RETURN(TypeNames t, type_names(reduce.shape.type));
  Scope row;
  row.indent = "      ";
  row.line(fmt::format("const IX base = o * {};", ix(shape.reduced)));
  SL_RETURN_IF_ERROR(warp_reduces(e, c, loop, shape.reduced, row));
  const bool bound = std::find(loop.reduces.begin(), loop.reduces.end(), r) != loop.reduces.end();
  std::string acc = "acc";
  if (bound) {
    SL_ASSIGN_OR_RETURN(acc, e.value(r, "o", row));
  } else {
    SL_ASSIGN_OR_RETURN(std::string init, e.value(reduce.operands[1], ix(0), row));
    row.line(fmt::format("{} acc = {}; bool first = lane != 0;", t.compute, init));
    Scope element = row.child();
    open_lane_loop(row, element, shape.reduced);
    SL_ASSIGN_OR_RETURN(std::string x, e.value(reduce.operands[0], e.index("base + r", element), element));
    element.line(fmt::format("acc = first ? {1} : {0}(acc, {1}); first = false;", red, x));
    close_lane_loop(row, element, shape.reduced);
    row.line(fmt::format("for (int s = 16; s > 0; s >>= 1) acc = {}(acc, ({})sl_shfl(acc, s));", red, t.compute));
  }
  row.line("if (lane == 0) {");
  SL_ASSIGN_OR_RETURN(std::string store, store_output(e, out, k, r, acc, row));
  row.code += store;
  row.line("}");
  e.unbind_all();
  return warp_per_row(out.elements, row.code);
}

// A warp per row of `loop.row` output elements: the row's reduces first,
// then each lane its elements (row_local.h).
Result<std::string> row_element_loop(Elemental& e, const hlo::Computation& c, const Output& out, int k,
                                     const RowLoop& loop) {
  Scope row;
  row.indent = "      ";
  row.line(fmt::format("const IX base = o * {};", ix(loop.row)));
  SL_RETURN_IF_ERROR(warp_reduces(e, c, loop, loop.row, row));
  Scope element = row.child();
  open_lane_loop(row, element, loop.row);
  element.line("const IX i = base + r;");
  SL_ASSIGN_OR_RETURN(std::string v, e.value(out.instruction, "i", element));
  element.line(fmt::format("o{}[{}] = {};", k, store_at(out, "i"), store_value(out.type, v)));
  close_lane_loop(row, element, loop.row);
  e.unbind_all();
  return warp_per_row(out.elements / loop.row, row.code);
}

// A transpose swapping the two minor dimensions ([..., A, B] -> [..., B, A]):
// the extents, when both are wide enough for a tile to pay.
struct MinorSwap {
  int transpose = -1;  // the instruction; the output is it or a reshape of it
  int64_t batch = 1, a = 1, b = 1;
};

// Output `k` when it is such a transpose, or a reshape or row-major bitcast
// of one (a GEMM prologue's operand is), which keeps its linear index.
std::optional<MinorSwap> minor_swap(const hlo::Computation& c, int k) {
  auto at = [&](int n) -> const hlo::Instruction& { return c.instructions[static_cast<size_t>(n)]; };
  const int64_t elements = at(k).shape.is_array() ? at(k).shape.element_count() : -1;
  const hlo::PrimitiveType type = at(k).shape.type;
  while ((at(k).opcode == Opcode::kReshape ||
          (at(k).opcode == Opcode::kBitcast && at(k).shape.is_row_major())) &&
         at(k).operands.size() == 1 && at(at(k).operands[0]).shape.is_row_major() &&
         at(at(k).operands[0]).shape.is_array() && at(at(k).operands[0]).shape.element_count() == elements) {
    k = at(k).operands[0];
  }
  const hlo::Instruction& t = at(k);
  if (t.opcode != Opcode::kTranspose || t.operands.size() != 1 || t.shape.type != type) return std::nullopt;
  const hlo::Shape& in = c.instructions[static_cast<size_t>(t.operands[0])].shape;
  const size_t n = in.dims.size();
  if (n < 2 || t.dimensions.size() != n) return std::nullopt;
  for (size_t d = 0; d + 2 < n; ++d) {
    if (t.dimensions[d] != static_cast<int64_t>(d)) return std::nullopt;
  }
  if (t.dimensions[n - 2] != static_cast<int64_t>(n - 1) || t.dimensions[n - 1] != static_cast<int64_t>(n - 2)) {
    return std::nullopt;
  }
  MinorSwap m;
  m.transpose = k;
  for (size_t d = 0; d + 2 < n; ++d) m.batch *= in.dims[d];
  m.a = in.dims[n - 2];
  m.b = in.dims[n - 1];
  if (m.a < 32 || m.b < 32) return std::nullopt;
  return m;
}

int64_t tiles_of(const MinorSwap& m) { return m.batch * ((m.a + 31) / 32) * ((m.b + 31) / 32); }

// A 32x32 tile a block: its 256 threads read the operand's tile along the
// operand's minor dimension into shared memory, then write it out along the
// output's (XLA's transpose emitter does the same), so both sides coalesce.
Result<std::string> transpose_loop(Elemental& e, const hlo::Computation& c, const Output& out, int k,
                                   const MinorSwap& m) {
  const hlo::Instruction& t = c.instructions[static_cast<size_t>(m.transpose)];
  SL_ASSIGN_OR_RETURN(TypeNames types, type_names(t.shape.type));
  const int64_t ta = (m.a + 31) / 32, tb = (m.b + 31) / 32;
  Scope load;
  load.indent = "          ";
  load.line(fmt::format("const IX xi = (bt * {} + a) * {} + b;", ix(m.a), ix(m.b)));
  SL_ASSIGN_OR_RETURN(std::string v, e.value(t.operands[0], "xi", load));
  load.line(fmt::format("tile{}[ty + j][tx] = {};", k, v));
  const std::string store = fmt::format("o{}[{}] = {};", k, store_at(out, fmt::format("(bt * {} + b) * {} + a", ix(m.b), ix(m.a))),
                                        store_value(out.type, fmt::format("tile{}[tx][ty + j]", k)));
  return fmt::format(
      "  {{ __shared__ {ct} tile{k}[32][33];\n"
      "    const IX tx = threadIdx.x & 31, ty = threadIdx.x >> 5;\n"
      "    for (IX t = blockIdx.x; t < {tiles}; t += gridDim.x) {{\n"
      "      const IX bt = t / {tab}, a0 = (t % {tab}) / {tb} * 32, b0 = (t % {tb}) * 32;\n"
      "      for (IX j = 0; j < 32; j += 8) {{\n"
      "        const IX a = a0 + ty + j, b = b0 + tx;\n"
      "        if (a < {a} && b < {b}) {{\n{load}        }}\n"
      "      }}\n"
      "      __syncthreads();\n"
      "      for (IX j = 0; j < 32; j += 8) {{\n"
      "        const IX b = b0 + ty + j, a = a0 + tx;\n"
      "        if (a < {a} && b < {b}) {store}\n"
      "      }}\n"
      "      __syncthreads();\n"
      "    }}\n  }}\n",
      fmt::arg("ct", types.compute), fmt::arg("k", k), fmt::arg("tiles", ix(tiles_of(m))), fmt::arg("tab", ix(ta * tb)),
      fmt::arg("tb", ix(tb)), fmt::arg("a", ix(m.a)), fmt::arg("b", ix(m.b)), fmt::arg("load", load.code),
      fmt::arg("store", store));
}

Result<std::string> column_loop(Elemental& e, const hlo::Computation& c, const Output& out, int k, int r,
                                const ReduceShape& shape) {
  const hlo::Instruction& reduce = c.instructions[static_cast<size_t>(r)];
  SL_ASSIGN_OR_RETURN(std::string red, e.reducer(reduce));
  SL_ASSIGN_OR_RETURN(TypeNames t, type_names(reduce.shape.type));
  Scope tile;
  tile.indent = "      ";
  tile.line("const IX o = tile * 32 + tx;");
  tile.line(fmt::format("{} acc = {}(); bool any = false;", t.compute, t.compute));
  tile.line(fmt::format("if (o < {}) {{", ix(out.elements)));
  Scope column = tile.child();
  column.line(fmt::format("const IX base = (o / {0}) * {1} + o % {0};", ix(shape.inner), ix(shape.inner * shape.reduced)));
  Scope element = column.child();
  open_strided_loop(column, element, shape.reduced, "ty", kColumnRows);
  SL_ASSIGN_OR_RETURN(std::string x, e.value(reduce.operands[0], e.index(fmt::format("base + r * {}", ix(shape.inner)), element), element));
  element.line(fmt::format("acc = any ? {0}(acc, {1}) : {1}; any = true;", red, x));
  close_strided_loop(column, element, shape.reduced, kColumnRows);
  tile.code += column.code;
  tile.line("}");
  tile.line(fmt::format("part{0}[ty][tx] = acc; any{0}[ty][tx] = any;", k));
  tile.line("__syncthreads();");
  tile.line(fmt::format("if (ty == 0 && o < {}) {{", ix(out.elements)));
  Scope total = tile.child();
  SL_ASSIGN_OR_RETURN(std::string init, e.value(reduce.operands[1], ix(0), total));
  total.line(fmt::format("{} total = {};", t.compute, init));
  total.line(fmt::format("for (int y = 0; y < {}; ++y) if (any{}[y][tx]) total = {}(total, part{}[y][tx]);",
                         kColumnRows, k, red, k));
  tile.code += total.code;
  SL_ASSIGN_OR_RETURN(std::string store, store_output(e, out, k, r, "total", total));
  tile.code += store;
  tile.line("}");
  tile.line("__syncthreads();");
  return fmt::format(
      "  {{ __shared__ {ct} part{k}[{rows}][33]; __shared__ bool any{k}[{rows}][33];\n"
      "    const IX tx = threadIdx.x & 31, ty = threadIdx.x >> 5;\n"
      "    for (IX tile = blockIdx.x; tile < {tiles}; tile += gridDim.x) {{\n{body}    }}\n  }}\n",
      fmt::arg("ct", t.compute), fmt::arg("k", k), fmt::arg("rows", kColumnRows),
      fmt::arg("tiles", ix((out.elements + 31) / 32)), fmt::arg("body", tile.code));
}

}  // namespace

std::vector<int> fusion_outputs(const hlo::Computation& c) {
  if (c.instructions.empty()) return {};
  const int root = c.root >= 0 ? c.root : static_cast<int>(c.instructions.size()) - 1;
  const hlo::Instruction& r = c.instructions[static_cast<size_t>(root)];
  return r.opcode == Opcode::kTuple ? r.operands : std::vector<int>{root};
}

namespace {

bool is_loaded(const std::vector<int>& loaded, int k) {
  return std::find(loaded.begin(), loaded.end(), k) != loaded.end();
}

enum class Driven { kNone, kRow, kColumn };

// How output `k`'s loop runs, and the reduce that drives it.
Driven driver_of(const hlo::Computation& c, int k, const std::vector<int>& loaded, int* reduce, ReduceShape* shape) {
  if (is_loaded(loaded, k)) return Driven::kNone;
  std::set<int> seen(loaded.begin(), loaded.end());
  const int64_t elements = c.instructions[static_cast<size_t>(k)].shape.element_count();
  std::optional<int> r = driving_reduce(c, k, elements, seen);
  if (!r) return Driven::kNone;
  const hlo::Instruction& red = c.instructions[static_cast<size_t>(*r)];
  std::optional<ReduceShape> s = contiguous(red, c.instructions[static_cast<size_t>(red.operands[0])].shape);
  if (!s) return Driven::kNone;
  *reduce = *r;
  *shape = *s;
  if (s->inner == 1 && s->reduced >= 32) return Driven::kRow;
  if (s->inner > 1 && s->reduced >= 2 * kColumnRows) return Driven::kColumn;
  return Driven::kNone;
}

}  // namespace

RowLocalPlan row_local_plan(const hlo::Computation& c, const std::vector<int>& outputs, const std::vector<int>& loaded,
                            bool outputs_are_temporaries) {
  std::vector<int64_t> driven(outputs.size(), 0);
  std::vector<bool> row_major(outputs.size(), true);
  for (size_t n = 0; n < outputs.size(); ++n) {
    int r = -1;
    ReduceShape s;
    const Driven how = driver_of(c, outputs[n], loaded, &r, &s);
    driven[n] = how == Driven::kRow ? s.reduced : (how == Driven::kColumn ? -1 : 0);
    row_major[n] = outputs_are_temporaries || c.instructions.at(static_cast<size_t>(outputs[n])).shape.is_row_major();
  }
  return plan_row_local(c, outputs, driven, row_major, loaded);
}

std::optional<int> loop_driver(const hlo::Computation& c, int k, const std::vector<int>& loaded) {
  int r = -1;
  ReduceShape s;
  if (driver_of(c, k, loaded, &r, &s) == Driven::kNone) return std::nullopt;
  return r;
}

Result<GeneratedKernel> generate_fusion_kernel(const hlo::Module& module, const hlo::Instruction& fusion) {
  auto refuse = [&](const std::string& why) {
    return runtime_error(fmt::format("fusion '{}': {}", fusion.name, why));
  };
  if (fusion.opcode != Opcode::kFusion || fusion.called.empty()) return refuse("not a fusion with calls=");
  if (!generates_kind(fusion.fusion_kind)) return refuse(fmt::format("kind {} is not generated", fusion.fusion_kind));
  const hlo::Computation& c = module.computations.at(static_cast<size_t>(fusion.called[0]));
  if (c.instructions.empty()) return refuse("empty computation");
  auto kernel = generate_kernel(module, c,
                                {.name = identifier(fusion.name),
                                 .comment = fmt::format("{} ({}, computation {})", fusion.name, fusion.fusion_kind, c.name),
                                 .outputs = fusion_outputs(c),
                                 .loaded = {}});
  if (!kernel.is_ok()) return refuse(kernel.status().message());
  return kernel;
}

Result<GeneratedKernel> generate_kernel(const hlo::Module& module, const hlo::Computation& c,
                                        const KernelRequest& request) {
  auto refuse = [&](const std::string& why) { return runtime_error(why); };
  GeneratedKernel kernel;
  kernel.name = request.name;
  // Parameters as kernel arguments; 32-bit indices when every array fits.
  int64_t largest = 1;
  for (const hlo::Instruction& inst : c.instructions) {
    if (inst.shape.is_array()) largest = std::max(largest, inst.shape.element_count());
  }
  std::vector<std::string> args;
  std::vector<const hlo::Shape*> param_shapes(c.parameters.size());
  for (size_t n = 0; n < c.parameters.size(); ++n) {
    const hlo::Instruction& p = c.instructions.at(static_cast<size_t>(c.parameters[n]));
    if (!p.shape.is_array()) return refuse(fmt::format("parameter {} is not an array", n));
    SL_ASSIGN_OR_RETURN(TypeNames t, type_names(p.shape.type));
    param_shapes[n] = &p.shape;
    args.push_back(fmt::format("const {}* __restrict__ p{}", t.storage, n));
  }
  kernel.inputs = static_cast<int>(c.parameters.size());

  std::string globals;
  int unique = 0;
  Elemental e(module, c, [&](int64_t number, const std::string& index) {
    const auto n = static_cast<size_t>(number);
    if (n >= param_shapes.size()) return std::string("0");
    return load_value(param_shapes[n]->type, fmt::format("p{}[{}]", n, physical_index(*param_shapes[n], index)));
  }, &globals, &unique);
  for (size_t l = 0; l < request.loaded.size(); ++l) {
    const hlo::Instruction& b = c.instructions.at(static_cast<size_t>(request.loaded[l]));
    if (!b.shape.is_array()) return refuse(fmt::format("'{}' is not an array", b.name));
    SL_ASSIGN_OR_RETURN(TypeNames t, type_names(b.shape.type));
    args.push_back(fmt::format("const {}* __restrict__ l{}", t.storage, l));
    e.load_from(request.loaded[l], fmt::format("l{}", l));
  }
  kernel.loaded = static_cast<int>(request.loaded.size());

  std::vector<Output> outputs;
  for (int r : request.outputs) {
    const hlo::Instruction& o = c.instructions.at(static_cast<size_t>(r));
    if (!o.shape.is_array()) return refuse(fmt::format("output '{}' is not an array", o.name));
    SL_ASSIGN_OR_RETURN(TypeNames t, type_names(o.shape.type));
    args.push_back(fmt::format("{}* __restrict__ o{}", t.storage, outputs.size()));
    outputs.push_back({r, o.shape.type, o.shape.element_count(), request.outputs_are_temporaries ? nullptr : &o.shape});
  }
  kernel.outputs = static_cast<int>(outputs.size());

  std::string loops;
  std::map<int64_t, std::vector<int>> elementwise;  // element count -> outputs
  kernel.loops.resize(outputs.size());
  const RowLocalPlan warp = row_local_plan(c, request.outputs, request.loaded, request.outputs_are_temporaries);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Output& out = outputs[k];
    KernelOutput& info = kernel.loops[k];
    info = {LoopKind::kElementwise, out.elements, out.elements};
    int r = -1;
    ReduceShape s;
    const Driven how = driver_of(c, out.instruction, request.loaded, &r, &s);
    Result<std::string> loop = std::string();
    if (how == Driven::kRow) {
      info = {LoopKind::kRowReduce, out.elements, out.elements * 32};
      loop = row_loop(e, c, out, static_cast<int>(k), r, s, warp.loops[k]);
    } else if (how == Driven::kNone && warp.loops[k].row > 0) {
      info = {LoopKind::kRowElementwise, out.elements, out.elements / warp.loops[k].row * 32};
      loop = row_element_loop(e, c, out, static_cast<int>(k), warp.loops[k]);
    } else if (how == Driven::kColumn) {
      info = {LoopKind::kColumnReduce, out.elements, (out.elements + 31) / 32 * kBlockThreads};
      loop = column_loop(e, c, out, static_cast<int>(k), r, s);
    } else if (auto swap = how == Driven::kNone ? minor_swap(c, out.instruction) : std::nullopt) {
      info = {LoopKind::kTransposeTile, out.elements, tiles_of(*swap) * kBlockThreads};
      loop = transpose_loop(e, c, out, static_cast<int>(k), *swap);
    } else {
      elementwise[out.elements].push_back(static_cast<int>(k));
    }
    if (!loop.is_ok()) return refuse(loop.status().message());
    loops += *loop;
  }
  for (const auto& [count, group] : elementwise) {
    auto loop = elementwise_loop(e, outputs, group);
    if (!loop.is_ok()) return refuse(loop.status().message());
    loops += *loop;
  }

  std::string params;
  for (size_t a = 0; a < args.size(); ++a) params += (a ? ", " : "") + args[a];
  kernel.source = std::string(kPrelude) +
                  fmt::format("typedef {} IX;\n", largest < (int64_t{1} << 31) ? "unsigned" : "unsigned long long") +
                  globals +
                  fmt::format("// {}\n", request.comment) +
                  fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({}) {{\n", kBlockThreads,
                              kernel.name, params) +
                  "  const IX tid = (IX)blockIdx.x * (IX)blockDim.x + (IX)threadIdx.x;\n"
                  "  const IX nthreads = (IX)gridDim.x * (IX)blockDim.x;\n" +
                  loops + "}\n";
  return kernel;
}

}  // namespace sl::exec::codegen
