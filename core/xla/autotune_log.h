#pragma once
// XLA's autotuning log (`--xla_gpu_dump_autotune_logs_to=FILE.txt`, an
// `xla.AutotuningLogs` text proto): while compiling, XLA's autotuner runs
// every candidate of every fusion and library call it tunes (Triton GEMM
// configs, cuBLASLt algorithms, the native emitter's) on the GPU and keeps
// the fastest. One entry per tuned instruction:
//   instruction_profiles {
//     hlo_fingerprint: "..."
//     config_profiles { config { backend: TRITON ... } run_time { nanos: 5088 } }
//     ...
//     hlo_text: "%gemm_fusion_dot = f32[64,512]{1,0} fusion(...), kind=kCustom, ..."
//   }
// Its times are the compiler's own measurements of kernels the program may
// never have run, which is what a what-if across GEMM emitters lacks.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/module.h"

namespace sl::xla {

struct AutotunedInstruction {
  std::string name;      // from hlo_text, without '%'
  std::string hlo_text;  // the instruction as XLA printed it when tuning it
  int64_t best_ns = 0;   // the fastest candidate's run time
  std::string best_backend;  // its backend: "TRITON", "CUBLASLT", "NATIVE_EMITTER", ...
  int64_t candidates = 0;
};

// Entries without hlo_text or without a timed candidate are left out; text
// that is no text proto is an error naming the line.
Result<std::vector<AutotunedInstruction>> parse_autotune_log(std::string_view text, std::string_view file_name);
Result<std::vector<AutotunedInstruction>> read_autotune_log(const std::string& path);

// An instruction's time in the log: its fastest candidate's, and that
// candidate's backend (the timing's overhead differs between backends).
struct AutotunedTime {
  int64_t ns = 0;
  std::string backend;
};

// The log's best time of each thunk-level instruction of `module`, by name:
// an entry counts only where `module` has an instruction of its name and
// result shape (XLA writes one log per process, so it may be another
// module's); an instruction XLA deduplicated into another (metadata
// deduplicated_name), or one that computes the same GEMM as an instruction
// with an entry, takes that one's entry; so does a dynamic-slice fusion
// whose one cuBLAS call computes the GEMM of a logged call (XLA does not
// tune a call inside such a fusion).
std::unordered_map<std::string, AutotunedTime> autotuned_times_of(const std::vector<AutotunedInstruction>& log,
                                                                  const hlo::Module& module);

// The log XLA wrote beside a dump (DIR/autotune_logs.txt, as `capture
// --xla-dump DIR` asks for it), or an empty string when there is none.
std::string autotune_log_path_for(const std::string& module_path);

}  // namespace sl::xla
