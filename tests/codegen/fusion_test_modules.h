#pragma once
// HLO modules of fusions that both the generator's tests (tests/codegen, no
// GPU: which loops and kernels) and the cuda backend's (tests/gpu: the same
// module against the cpu backend) use.

#include <string>

namespace sl::exec::codegen::test_modules {

// The max and add reducers, to begin a module with.
inline constexpr const char* kReducers = R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

// A softmax over `rows` rows of `cols`: its max and sum are each read at
// their row, so a warp per row computes them. `config`: the fusion's
// backend_config.
inline std::string softmax(int rows, int cols, const std::string& kind = "kLoop", const std::string& config = "{}") {
  const std::string m = "f32[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  const std::string v = "f32[" + std::to_string(rows) + "]";
  return std::string(kReducers) + "fused {\n  p = " + m + " parameter(0)\n  ninf = f32[] constant(-inf)\n" +
         "  z = f32[] constant(0)\n  mx = " + v + " reduce(p, ninf), dimensions={1}, to_apply=max\n" +
         "  bm = " + m + " broadcast(mx), dimensions={0}\n  d = " + m + " subtract(p, bm)\n" +
         "  e = " + m + " exponential(d)\n  s = " + v + " reduce(e, z), dimensions={1}, to_apply=add\n" +
         "  bs = " + m + " broadcast(s), dimensions={0}\n  ROOT r = " + m + " divide(e, bs)\n}\n" +
         "ENTRY e {\n  x = " + m + " parameter(0)\n  ROOT f = " + m + " fusion(x), kind=" + kind +
         ", calls=fused, backend_config=" + config + "\n}\n";
}

// `mx` is read at its row by `s` but at a column by `bc`: no warp can hold it.
inline std::string read_two_ways() {
  return std::string(kReducers) + R"(fused {
  p = f32[64,64] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[64] reduce(p, ninf), dimensions={1}, to_apply=max
  br = f32[64,64] broadcast(mx), dimensions={0}
  s = f32[64,64] subtract(p, br)
  bc = f32[64,64] broadcast(mx), dimensions={1}
  ROOT r = f32[64,64] add(s, bc)
}
ENTRY e {
  x = f32[64,64] parameter(0)
  ROOT f = f32[64,64] fusion(x), kind=kLoop, calls=fused
})";
}

// The root is a reduce of each row whose operand reads the row's max (XLA's
// softmax denominator, fusion.97 of the transformer step), in bf16 with a
// causal mask from iotas, beside a reduce read at a column: hoisted.
inline std::string row_reduces() {
  return std::string(kReducers) + R"(fused {
  p = bf16[4,96,96] parameter(0)
  i0 = s32[96,96] iota(), iota_dimension=0
  i1 = s32[96,96] iota(), iota_dimension=1
  ge = pred[96,96] compare(i0, i1), direction=GE
  mask = pred[4,96,96] broadcast(ge), dimensions={1,2}
  big = bf16[] constant(-9984)
  bbig = bf16[4,96,96] broadcast(big), dimensions={}
  sel = bf16[4,96,96] select(mask, p, bbig)
  x = f32[4,96,96] convert(sel)
  ninf = f32[] constant(-inf)
  z = f32[] constant(0)
  mx = f32[4,96] reduce(x, ninf), dimensions={2}, to_apply=max
  bm = f32[4,96,96] broadcast(mx), dimensions={0,1}
  d = f32[4,96,96] subtract(x, bm)
  e = f32[4,96,96] exponential(d)
  s = f32[4,96] reduce(e, z), dimensions={2}, to_apply=add
  cm = f32[4,96] reduce(x, ninf), dimensions={1}, to_apply=max
  bc = f32[4,96,96] broadcast(cm), dimensions={0,2}
  y = f32[4,96,96] subtract(x, bc)
  ROOT t = (f32[4,96], f32[4,96,96]) tuple(s, y)
}
ENTRY e {
  x = bf16[4,96,96] parameter(0)
  ROOT f = (f32[4,96], f32[4,96,96]) fusion(x), kind=kInput, calls=fused
})";
}

// The transformer's input_transpose_fusion (a slice of a bitcast parameter,
// its two minor dimensions swapped, partial tiles on both sides), a bitcast
// of it, and a transpose of major dimensions only.
inline constexpr const char* kTransposes = R"(HloModule m
fused {
  p = bf16[96,150] parameter(0)
  b = bf16[2,48,150] bitcast(p)
  s = bf16[2,48,100] slice(b), slice={[0:2], [0:48], [10:110]}
  minor = bf16[2,100,48] transpose(s), dimensions={0,2,1}
  major = bf16[48,2,150] transpose(b), dimensions={1,0,2}
  flat = bf16[200,48] bitcast(minor)
  ROOT t = (bf16[2,100,48], bf16[48,2,150], bf16[200,48]) tuple(minor, major, flat)
}
ENTRY e {
  x = bf16[96,150] parameter(0)
  ROOT f = (bf16[2,100,48], bf16[48,2,150], bf16[200,48]) fusion(x), kind=kInput, calls=fused
})";

// A Triton GEMM fusion batched over a dimension that is not leading (the
// mlp step's gemm_fusion_dot.2 in some compilations): lhs [m, batch, k],
// rhs [batch, k, n]; and one with k leading in both: lhs [k, batch, m]
// (stored transposed), rhs [k, batch, n].
inline constexpr const char* kStridedBatchGemm = R"(HloModule m
gemm {
  a = f32[32,4,48] parameter(0)
  b = f32[4,48,40] parameter(1)
  ROOT d = f32[4,32,40] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
ENTRY e {
  x = f32[32,4,48] parameter(0)
  y = f32[4,48,40] parameter(1)
  ROOT f = f32[4,32,40] fusion(x, y), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion"}}
})";

inline constexpr const char* kStridedBatchGemmKLeading = R"(HloModule m
gemm {
  a = f32[48,4,32] parameter(0)
  b = f32[48,4,40] parameter(1)
  ROOT d = f32[4,32,40] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_batch_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = f32[48,4,32] parameter(0)
  y = f32[48,4,40] parameter(1)
  ROOT f = f32[4,32,40] fusion(x, y), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion"}}
})";

}  // namespace sl::exec::codegen::test_modules
