// Every after-optimizations dump of tests/corpus/jax simulates, its GEMM
// fusions cost as GEMMs, and no kernel is costed below its roofline bound.
// Loading the dumps is the parser's job (tests/hlo): a dump it cannot read
// yet is listed in the test's skip message, never passed over silently.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/hlo/parser.h"
#include "core/sched/lowering.h"
#include "sim/cost_model.h"
#include "sim/device_model.h"
#include "sim/engine.h"
#include "sim/kernel_content.h"
#include "sim/sim_backend.h"
#include "tests/common/test_support.h"

namespace sl::sim {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> dumps() {
  std::vector<std::string> out;
  const fs::path root = fs::path(SL_SOURCE_DIR) / "tests/corpus/jax";
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.ends_with("_gpu_after_optimizations.txt")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}


// The time no implementation can beat: the work at the device's peak rates
// (for an f32 GEMM, TF32's where XLA rounds it so).
double roofline_ns(const DeviceModel& m, const KernelWork& w, const sched::Thunk& t) {
  double flops = w.flops, peak = m.peak_f32_tflops * 1e12;
  if (t.kind == sched::ThunkKind::kGemm) {
    flops = static_cast<double>(t.flops);
    peak = gemm_peak_flops(m, t.gemm.type, t.gemm.tf32);
  } else if (w.work_class == WorkClass::kGemm || w.work_class == WorkClass::kConvolution) {
    peak = gemm_peak_flops(m, w.gemm.type, w.gemm.tf32);
  }
  const double bytes = t.kind == sched::ThunkKind::kGemm ? static_cast<double>(t.bytes_accessed) : w.bytes();
  return std::max({flops / peak * 1e9, w.transcendentals / transcendental_rate(m) * 1e9,
                   bytes / m.hbm_bandwidth_gbps});
}

struct Loaded {
  hlo::Module module;
  sched::LoweredProgram program;
};

// False when the dump does not parse (the parser's to fix; *why says why);
// a parsed dump that does not lower is a failure.
bool load(const std::string& path, Loaded* out, std::string* why) {
  Result<hlo::Module> m = hlo::parse_program(test_support::read_bytes(path), path);
  if (!m.is_ok()) {
    *why += "\n  " + m.status().message().substr(0, m.status().message().find('\n'));
    return false;
  }
  out->module = std::move(*m);
  Result<sched::LoweredProgram> p = sched::lower(out->module, {});
  EXPECT_TRUE(p.is_ok()) << path << ": " << p.status().message();
  if (!p.is_ok()) return false;
  out->program = std::move(*p);
  return true;
}

TEST(CorpusSim, EveryDumpSimulatesWithinItsRoofline) {
  Result<DeviceModel> model = load_device_model("h200");
  ASSERT_TRUE(model.is_ok());
  const std::vector<std::string> files = dumps();
  ASSERT_GE(files.size(), 19u) << "tests/corpus/jax lost dumps";
  std::string unparsed;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    Loaded l;
    if (!load(path, &l, &unparsed)) continue;
    Result<exec::RunOutput> out = make_sim_backend(*model)->run(l.program, exec::RunOptions{});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_GT(out->trace.makespan_ns(), 0);
    for (const sched::DeviceProgram& d : l.program.devices) {
      for (const sched::Thunk& t : d.thunks) {
        if (t.kind != sched::ThunkKind::kKernel && t.kind != sched::ThunkKind::kGemm) continue;
        const KernelWork w = kernel_work(&l.module, t);
        const KernelCost c = t.kind == sched::ThunkKind::kGemm ? gemm_cost(*model, t, false)
                                                               : content_cost(*model, t, w, false);
        EXPECT_GE(c.work_ns * (1 + 1e-9), roofline_ns(*model, w, t)) << t.attributed_name;
        EXPECT_TRUE(c.work_ns > 0 && c.work_ns < 1e12) << t.attributed_name << ": " << c.work_ns;
      }
    }
  }
  if (!unparsed.empty()) GTEST_SKIP() << "dumps the parser does not read yet:" << unparsed;
}

// Fusions holding a dot (Triton GEMM fusions) cost as GEMMs with that dot's
// dimensions, at no more than the bf16 peak.
TEST(CorpusSim, TransformerGemmFusionsAreGemms) {
  Result<DeviceModel> model = load_device_model("h200");
  ASSERT_TRUE(model.is_ok());
  std::string unparsed;
  for (const char* size : {"small", "large"}) {
    const std::string dir = std::string(SL_SOURCE_DIR) + "/tests/corpus/jax/" + size + "/transformer_train_step_bf16";
    std::string path;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().string().ends_with("_gpu_after_optimizations.txt")) path = e.path().string();
    }
    SCOPED_TRACE(path);
    Loaded l;
    if (!load(path, &l, &unparsed)) continue;
    int gemm_fusions = 0;
    for (const sched::Thunk& t : l.program.devices.at(0).thunks) {
      if (t.instruction == nullptr || t.kind != sched::ThunkKind::kKernel) continue;
      const hlo::Instruction& inst = *t.instruction;
      const bool triton_gemm = inst.opcode == hlo::Opcode::kFusion &&
                               (inst.backend_config.find("\"__triton_gemm\"") != std::string::npos ||
                                inst.backend_config.find("\"__triton_nested_gemm_fusion\"") != std::string::npos);
      if (!triton_gemm) continue;
      ++gemm_fusions;
      const KernelWork w = kernel_work(&l.module, t);
      ASSERT_EQ(w.work_class, WorkClass::kGemm) << inst.name;
      EXPECT_EQ(w.gemm.type, hlo::PrimitiveType::kBF16) << inst.name;
      EXPECT_GT(w.gemm.m * w.gemm.n * w.gemm.k, 0) << inst.name;
      const KernelCost c = content_cost(*model, t, w, false);
      EXPECT_GE(c.work_ns, w.flops / (model->peak_bf16_tflops * 1e12) * 1e9) << inst.name;
    }
    EXPECT_GE(gemm_fusions, 7) << size;
  }
  if (!unparsed.empty()) GTEST_SKIP() << "dumps the parser does not read yet:" << unparsed;
}

}  // namespace
}  // namespace sl::sim
