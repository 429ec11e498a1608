#include "core/trace/kernel_class.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace sl::trace {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool contains_nocase(std::string_view s, std::string_view needle) {
  auto it = std::search(s.begin(), s.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != s.end();
}

}  // namespace

EventKind classify_kernel(std::string_view name) {
  if (starts_with(name, "nccl") || contains_nocase(name, "ncclDevKernel") || contains_nocase(name, "ncclKernel")) {
    return EventKind::kCollective;
  }
  // cuBLAS/cuBLASLt (nvjet_*, sm90_xmma_gemm_*, cutlass*), cuBLAS's split-K
  // reduction, Triton GEMM fusions (gemm_fusion_dot*, triton_gemm*).
  if (starts_with(name, "nvjet") || contains_nocase(name, "gemm") || contains_nocase(name, "cutlass") ||
      contains_nocase(name, "xmma") || contains_nocase(name, "splitKreduce") || contains_nocase(name, "matmul")) {
    return EventKind::kGemm;
  }
  return EventKind::kOther;
}

bool is_dnn_kernel(std::string_view name) { return contains_nocase(name, "cudnn"); }

bool is_autotuning_kernel(std::string_view name) {
  return contains_nocase(name, "RedzoneAllocatorKernel") || contains_nocase(name, "xla_fp_comparison") ||
         contains_nocase(name, "xla_int_comparison") || contains_nocase(name, "DelayKernel") ||
         contains_nocase(name, "RepeatBufferKernel") || contains_nocase(name, "comparison_kernel");
}

}  // namespace sl::trace
