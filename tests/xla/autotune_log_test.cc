// XLA's autotuning log (--xla_gpu_dump_autotune_logs_to): the text proto
// read, each instruction's fastest candidate, and the entries tied to the
// instructions of one module only where the name and the shape agree.

#include "core/xla/autotune_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_map>

#include "core/hlo/parser.h"

namespace sl::xla {
namespace {

namespace fs = std::filesystem;

// The log's times of a module's instructions, both given as text; empty
// (and a failure) when either does not parse.
std::unordered_map<std::string, AutotunedTime> times_of(const char* log_text, const char* module_text) {
  auto module = hlo::parse_program(module_text, "m.txt");
  auto log = parse_autotune_log(log_text, "autotune_logs.txt");
  if (!module.is_ok() || !log.is_ok()) {
    ADD_FAILURE() << (module.is_ok() ? log.status().message() : module.status().message());
    return {};
  }
  return autotuned_times_of(*log, *module);
}

// The shape of a real log (fori_power_iteration without Triton GEMMs, one
// H200): a cuBLASLt call's algorithms, then a fusion's emitters, one of
// which failed (no run_time).
constexpr const char* kLog = R"(device: "ed0e56ab8b2a0ecb"
per_backend_versions {
  key: "CUBLASLT"
  value: "13.0.0"
}
instruction_profiles {
  hlo_fingerprint: "ea72893ac6bf1d6bbdcecdf426158658"
  config_profiles {
    config {
      backend: CUBLASLT
      backend_config {
        gemm {
          autotune_workspace_size: 33554432
        }
      }
    }
    run_time {
      nanos: 15552
    }
    scratch_bytes: 33554432
  }
  config_profiles {
    config {
      backend: CUBLASLT
      backend_config {
        gemm {
          algorithm: 3
        }
      }
    }
    run_time {
      nanos: 12896
    }
  }
  hlo_text: "%custom-call.1 = (f32[2048,32]{1,0}, s8[33554432]{0}) custom-call(%p0, %p1), custom_call_target=\"__cublas$lt$matmul\""
}
instruction_profiles {
  hlo_fingerprint: "051a0c852a0ee4884f652871195d340f"
  config_profiles {
    config {
      backend: NATIVE_EMITTER
    }
    run_time {
      nanos: 9024
    }
  }
  config_profiles {
    config {
      backend: BLOCK_LEVEL_EMITTER
      backend_config { block_level { num_warps: 4 output_tiles { sizes: 2 } } }
    }
    run_time {
      nanos: 5344
    }
  }
  config_profiles {
    config {
      backend: TRITON
    }
    failure { kind: RESOURCE_EXHAUSTED }
  }
  hlo_text: "%input_reduce_fusion = f32[32]{0} fusion(%p0), kind=kInput, calls=%fused_reduce"
}
)";

TEST(AutotuneLog, EachInstructionTakesItsFastestTimedCandidate) {
  auto log = parse_autotune_log(kLog, "autotune_logs.txt");
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  ASSERT_EQ(log->size(), 2u);
  EXPECT_EQ((*log)[0].name, "custom-call.1");
  EXPECT_EQ((*log)[0].best_ns, 12896);
  EXPECT_EQ((*log)[0].best_backend, "CUBLASLT");
  EXPECT_EQ((*log)[0].candidates, 2);
  EXPECT_NE((*log)[0].hlo_text.find("\"__cublas$lt$matmul\""), std::string::npos) << "the string's \\\" unescaped";
  EXPECT_EQ((*log)[1].name, "input_reduce_fusion");
  EXPECT_EQ((*log)[1].best_ns, 5344);
  EXPECT_EQ((*log)[1].best_backend, "BLOCK_LEVEL_EMITTER");
  EXPECT_EQ((*log)[1].candidates, 2) << "the candidate that failed is no time";
}

TEST(AutotuneLog, SecondsAndNanosAddUp) {
  auto log = parse_autotune_log(R"(instruction_profiles {
  config_profiles { config { backend: TRITON } run_time { seconds: 1 nanos: 5 } }
  hlo_text: "%slow = f32[4]{0} fusion(%p), kind=kCustom"
})",
                                "t.txt");
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  ASSERT_EQ(log->size(), 1u);
  EXPECT_EQ((*log)[0].best_ns, 1'000'000'005);
}

TEST(AutotuneLog, EntriesWithoutTextOrTimeAreLeftOut) {
  auto log = parse_autotune_log(R"(instruction_profiles {
  config_profiles { config { backend: TRITON } run_time { nanos: 700 } }
}
instruction_profiles {
  config_profiles { config { backend: TRITON } failure { kind: DISQUALIFIED } }
  hlo_text: "%never = f32[4]{0} fusion(%p), kind=kCustom"
})",
                                "t.txt");
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  EXPECT_TRUE(log->empty());
}

TEST(AutotuneLog, TextThatIsNoTextProtoNamesItsLine) {
  for (const char* bad : {"instruction_profiles {\n  config_profiles {\n", "a: 1\n}\n", "a: \"open\n\"",
                          "instruction_profiles {\n  = 3\n}"}) {
    auto log = parse_autotune_log(bad, "bad.txt");
    ASSERT_FALSE(log.is_ok()) << bad;
    EXPECT_EQ(log.status().code(), ErrorCode::kInvalidInput);
    EXPECT_NE(log.status().message().find("bad.txt:"), std::string::npos) << log.status().message();
  }
}

TEST(AutotuneLog, NestingPastAnyLogsIsAnErrorNotADeepRecursion) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "a {";
  auto log = parse_autotune_log(deep, "deep.txt");
  ASSERT_FALSE(log.is_ok());
  EXPECT_NE(log.status().message().find("nested deeper"), std::string::npos) << log.status().message();
}

// XLA writes one log a process: entries of another module's instructions
// that share a name but not a shape count for nothing, and an instruction
// XLA deduplicated into another takes that one's time.
TEST(AutotuneLog, EntriesCountForAModuleOnlyWhereTheNameAndShapeAgree) {
  const auto times = times_of(kLog, R"(HloModule m, is_scheduled=true

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%fused_reduce (a: f32[4,32]) -> f32[32] {
  %a = f32[4,32]{1,0} parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[32]{0} reduce(%a, %z), dimensions={0}, to_apply=%add
}

ENTRY %main (p0: f32[4,32], p1: f32[2048,32]) -> (f32[32], f32[32], f32[2048,32]) {
  %p0 = f32[4,32]{1,0} parameter(0)
  %p1 = f32[2048,32]{1,0} parameter(1)
  %input_reduce_fusion = f32[32]{0} fusion(%p0), kind=kInput, calls=%fused_reduce
  %input_reduce_fusion.1 = f32[32]{0} fusion(%p0), kind=kInput, calls=%fused_reduce, metadata={op_name="jit(f)/sum" deduplicated_name="input_reduce_fusion"}
  %custom-call.1 = f32[2048,32]{1,0} negate(%p1)
  ROOT %t = (f32[32]{0}, f32[32]{0}, f32[2048,32]{1,0}) tuple(%input_reduce_fusion, %input_reduce_fusion.1, %custom-call.1)
}
)");
  EXPECT_EQ(times.size(), 2u);
  EXPECT_EQ(times.count("custom-call.1"), 0u) << "the log's custom-call.1 is a tuple, this one an array";
  ASSERT_EQ(times.count("input_reduce_fusion"), 1u);
  EXPECT_EQ(times.at("input_reduce_fusion").ns, 5344);
  ASSERT_EQ(times.count("input_reduce_fusion.1"), 1u) << "deduplicated into input_reduce_fusion";
  EXPECT_EQ(times.at("input_reduce_fusion.1").ns, 5344);
}

// XLA tunes each distinct GEMM once: of two cuBLAS calls with the same
// shapes and configuration (hold-out set 18's ahg, notriton: custom-call.11
// repeats custom-call.9's product on other operands) the log names the
// first only, and the second takes its time; a call with other strides
// (another product) does not.
TEST(AutotuneLog, AThunkOfTheSameGemmAsALoggedOneTakesItsTime) {
  constexpr const char* kGemmLog = R"(instruction_profiles {
  config_profiles {
    config { backend: CUBLASLT }
    run_time { nanos: 5120 }
  }
  hlo_text: "%custom-call.9 = (bf16[512,512]{1,0}, s8[1024]{0}) custom-call(%a, %b), custom_call_target=\"__cublas$lt$matmul\""
}
)";
  const auto times = times_of(kGemmLog, R"(HloModule m, is_scheduled=true

ENTRY %main (a: bf16[512,256], b: bf16[512,256], c: bf16[512,256]) -> (bf16[512,512], bf16[512,512], bf16[512,512]) {
  %a = bf16[512,256]{1,0} parameter(0)
  %b = bf16[512,256]{1,0} parameter(1)
  %c = bf16[512,256]{1,0} parameter(2)
  %custom-call.9 = (bf16[512,512]{1,0}, s8[1024]{0}) custom-call(%a, %b), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"lhs_stride":"131072","rhs_stride":"131072","selected_algorithm":"1"},"operation_queue_id":"0"}
  %custom-call.11 = (bf16[512,512]{1,0}, s8[1024]{0}) custom-call(%c, %b), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"lhs_stride":"131072","rhs_stride":"131072","selected_algorithm":"1"},"operation_queue_id":"0"}
  %custom-call.12 = (bf16[512,512]{1,0}, s8[1024]{0}) custom-call(%a, %c), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"lhs_stride":"262144","rhs_stride":"131072","selected_algorithm":"1"},"operation_queue_id":"0"}
  %g9 = bf16[512,512]{1,0} get-tuple-element(%custom-call.9), index=0
  %g11 = bf16[512,512]{1,0} get-tuple-element(%custom-call.11), index=0
  %g12 = bf16[512,512]{1,0} get-tuple-element(%custom-call.12), index=0
  ROOT %t = (bf16[512,512]{1,0}, bf16[512,512]{1,0}, bf16[512,512]{1,0}) tuple(%g9, %g11, %g12)
}
)");
  ASSERT_EQ(times.count("custom-call.9"), 1u);
  EXPECT_EQ(times.at("custom-call.9").ns, 5120);
  ASSERT_EQ(times.count("custom-call.11"), 1u) << "the same GEMM as custom-call.9";
  EXPECT_EQ(times.at("custom-call.11").ns, 5120);
  EXPECT_EQ(times.count("custom-call.12"), 0u) << "other strides: another product";
}

// A cuBLAS call inside a dynamic-slice fusion is not tuned on its own (no
// algorithm, no workspace), and its fusion runs nothing else: the fusion
// takes the entry of a call of the same GEMM (hold-out set 21's xat: XLA
// merged two projections into one call and multiplied its slices). A call
// of another GEMM lends it nothing.
TEST(AutotuneLog, ADynamicSliceFusionTakesTheTimeOfItsGemm) {
  constexpr const char* kGemmLog = R"(instruction_profiles {
  config_profiles {
    config { backend: CUBLASLT }
    run_time { nanos: 3200 }
  }
  hlo_text: "%custom-call.17 = (bf16[256,512]{1,0}, s8[1024]{0}) custom-call(%x, %w), custom_call_target=\"__cublas$lt$matmul\""
}
)";
  const auto times = times_of(kGemmLog, R"(HloModule m, is_scheduled=true

%dynamic-slice-fusion (p0: bf16[1024,512], p1: bf16[256,512]) -> (bf16[256,512], s8[1024]) {
  %p1 = bf16[256,512]{1,0} parameter(1)
  %p0 = bf16[1024,512]{1,0} parameter(0)
  %slice.4 = bf16[512,512]{1,0} slice(%p0), slice={[512:1024], [0:512]}
  ROOT %custom-call.26 = (bf16[256,512]{1,0}, s8[1024]{0}) custom-call(%p1, %slice.4), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"autotune_workspace_size":"0","beta":0,"lhs_stride":"131072","rhs_stride":"262144","scale_mode":0},"operation_queue_id":"0"}
}

%dynamic-slice-fusion.1 (p0.1: bf16[1024,512], p1.1: bf16[256,512]) -> (bf16[256,512], s8[1024]) {
  %p1.1 = bf16[256,512]{1,0} parameter(1)
  %p0.1 = bf16[1024,512]{1,0} parameter(0)
  %slice.5 = bf16[512,512]{1,0} slice(%p0.1), slice={[0:512], [0:512]}
  ROOT %custom-call.27 = (bf16[256,512]{1,0}, s8[1024]{0}) custom-call(%p1.1, %slice.5), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"autotune_workspace_size":"0","beta":1,"lhs_stride":"131072","rhs_stride":"262144","scale_mode":0},"operation_queue_id":"0"}
}

ENTRY %main (x: bf16[256,512], w: bf16[512,512], kv: bf16[1024,512]) -> (bf16[256,512], bf16[256,512], bf16[256,512]) {
  %x = bf16[256,512]{1,0} parameter(0)
  %w = bf16[512,512]{1,0} parameter(1)
  %kv = bf16[1024,512]{1,0} parameter(2)
  %custom-call.17 = (bf16[256,512]{1,0}, s8[1024]{0}) custom-call(%x, %w), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"autotune_workspace_size":"1024","beta":0,"lhs_stride":"131072","rhs_stride":"262144","scale_mode":0,"selected_algorithm":"3"},"operation_queue_id":"0"}
  %dynamic_slice_fusion = (bf16[256,512]{1,0}, s8[1024]{0}) fusion(%kv, %x), kind=kCustom, calls=%dynamic-slice-fusion, backend_config={"fusion_backend_config":{"custom_fusion_config":{"kernel_index":0,"name":"dynamic_slice_fusion"},"kind":"__custom_fusion"},"operation_queue_id":"0"}
  %dynamic_slice_fusion.1 = (bf16[256,512]{1,0}, s8[1024]{0}) fusion(%kv, %x), kind=kCustom, calls=%dynamic-slice-fusion.1, backend_config={"fusion_backend_config":{"custom_fusion_config":{"kernel_index":0,"name":"dynamic_slice_fusion"},"kind":"__custom_fusion"},"operation_queue_id":"0"}
  %g17 = bf16[256,512]{1,0} get-tuple-element(%custom-call.17), index=0
  %g = bf16[256,512]{1,0} get-tuple-element(%dynamic_slice_fusion), index=0
  %g1 = bf16[256,512]{1,0} get-tuple-element(%dynamic_slice_fusion.1), index=0
  ROOT %t = (bf16[256,512]{1,0}, bf16[256,512]{1,0}, bf16[256,512]{1,0}) tuple(%g17, %g, %g1)
}
)");
  ASSERT_EQ(times.count("dynamic_slice_fusion"), 1u) << "its call is custom-call.17's GEMM on a slice";
  EXPECT_EQ(times.at("dynamic_slice_fusion").ns, 3200);
  EXPECT_EQ(times.at("dynamic_slice_fusion").backend, "CUBLASLT");
  EXPECT_EQ(times.count("dynamic_slice_fusion.1"), 0u) << "beta 1: another GEMM";
}

TEST(AutotuneLog, TheLogIsFoundBesideTheDumpedModuleOnly) {
  const fs::path dir = fs::temp_directory_path() / "sl_autotune_log_path";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string module = (dir / "module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt").string();
  EXPECT_EQ(autotune_log_path_for(module), "");
  std::ofstream(dir / "autotune_logs.txt") << kLog;
  EXPECT_EQ(autotune_log_path_for(module), (dir / "autotune_logs.txt").string());
  auto log = read_autotune_log(autotune_log_path_for(module));
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  EXPECT_EQ(log->size(), 2u);
  auto missing = read_autotune_log((dir / "none.txt").string());
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidInput);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sl::xla
