// The cuda backend on two GPUs (docs/architecture.md): NCCL kernels
// attributed to their collectives, one process per rank, and a failed or
// hung device or rank stopping its peers instead of leaving them waiting.
// Skips without two GPUs.
#include "core/exec/cuda/cuda_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "core/exec/cpu/cpu_backend.h"
#include "core/hlo/parser.h"
#include "core/sched/lowering.h"
#include "tests/gpu/cuda_test_util.h"

namespace sl::exec {
namespace {

using namespace gpu_test;

// NCCL launches its kernels through the driver API: they must be attributed
// to their collective as well, whichever API records the tracer asks for
// (SL_CUPTI_API).
TEST_F(CudaTest, TraceAttributesNcclKernelsToCollectives) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  RunOptions o;
  o.iterations = 2;
  Both b = run_both(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[1024,256] parameter(0)
  ag = f32[2048,256] all-gather(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  ROOT n = f32[2048,256] negate(ag)
})", o);
  expect_same(b);
  const trace::Trace& t = b.cuda.trace;
  int gathers = 0;
  for (const trace::Event& e : t.events) gathers += t.instruction_of(e) == "ag" && e.kind == trace::EventKind::kCollective;
  EXPECT_GE(gathers, 4);  // a NCCL kernel per device per iteration
  for (const trace::Counter& c : t.counters) {
    EXPECT_FALSE(c.name == "kernels_without_instruction" && c.value > 0) << c.value << " kernels without instruction";
  }
}

// Index of the last collective thunk of a device program (size() if none).
size_t last_collective(const sched::DeviceProgram& device) {
  size_t found = device.thunks.size();
  for (size_t i = 0; i < device.thunks.size(); ++i) {
    if (device.thunks[i].kind == sched::ThunkKind::kCollective) found = i;
  }
  return found;
}

// Multi-process mode with two threads standing in for the two processes
// (one device per rank, NCCL ids over the TCP rendezvous on `port`). The
// tracer is off, since CUPTI has one sink per process. Rank r runs with o[r].
std::vector<Result<RunOutput>> run_as_two_ranks(const sched::LoweredProgram& program,
                                                const std::array<RunOptions, 2>& o, int port) {
  std::vector<Result<RunOutput>> outs(2, Result<RunOutput>(runtime_error("not run")));
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      CudaOptions options;
      options.trace = false;
      options.dist = dist::DistEnv{.rank = r, .world_size = 2, .local_rank = r, .master_port = port};
      auto backend = make_cuda_backend(options);
      outs[static_cast<size_t>(r)] =
          backend ? (*backend)->run(program, o[static_cast<size_t>(r)]) : Result<RunOutput>(backend.status());
    });
  }
  for (auto& t : ranks) t.join();
  return outs;
}

std::vector<Result<RunOutput>> run_as_two_ranks(const sched::LoweredProgram& program, const RunOptions& o,
                                                int port) {
  return run_as_two_ranks(program, {o, o}, port);
}

// After a run stopped on purpose, a fresh backend runs the program again.
void expect_the_gpus_still_run(const sched::LoweredProgram& lowered) {
  RunOptions o;
  o.iterations = 2;
  auto healthy = make_cuda_backend({});
  ASSERT_TRUE(healthy.is_ok()) << healthy.status().message();
  auto again = (*healthy)->run(lowered, o);
  EXPECT_TRUE(again.is_ok()) << again.status().message();
}

// Device 1 fails before or after it issues its collective: the run ends
// with device 1's error, and device 0, which waits for it in a collective, is
// stopped (its communicators aborted by the failing thread) instead of
// hanging; the GPUs stay usable for the next run. It hung before (2 x H200,
// NCCL 2.28, fifth session): device 0's thread blocked inside NCCL, which
// connects ranks lazily.
void expect_a_failed_device_stops_its_peer(const char* text) {
  auto module = hlo::parse_program(text, "fail.hlo");
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto lowered = sched::lower(*module, {});
  ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
  const size_t collective = last_collective(lowered->devices.at(1));
  ASSERT_LT(collective + 1, lowered->devices.at(1).thunks.size());

  // Before its collective (device 0 waits for it there), and after it
  // (device 0's next collective kernel waits on the GPU).
  for (size_t fail_thunk : {collective, collective + 1}) {
    SCOPED_TRACE("failing at thunk " + std::to_string(fail_thunk));
    const std::string fail_at = "1:" + std::to_string(fail_thunk);
    ASSERT_EQ(setenv("SL_CUDA_FAIL_THUNK", fail_at.c_str(), 1), 0);
    auto failing = make_cuda_backend({});
    unsetenv("SL_CUDA_FAIL_THUNK");
    ASSERT_TRUE(failing.is_ok()) << failing.status().message();
    RunOptions o;
    o.iterations = 3;
    auto result = (*failing)->run(*lowered, o);
    ASSERT_FALSE(result.is_ok());
    EXPECT_NE(result.status().message().find("injected failure"), std::string::npos) << result.status().message();
    EXPECT_NE(result.status().message().find("device 1"), std::string::npos) << result.status().message();
  }

  expect_the_gpus_still_run(*lowered);
}

TEST_F(CudaTest, AFailedDeviceDoesNotLeaveItsPeerWaitingInNccl) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  expect_a_failed_device_stops_its_peer(R"(HloModule m, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4096,1024] parameter(0)
  ar = f32[4096,1024] all-reduce(x), channel_id=1, replica_groups={{0,1}}, to_apply=add, use_global_device_ids=true
  ROOT n = f32[4096,1024] negate(ar)
})");
}

// Sends and receives connect their peers lazily even with the ranks
// connected at init: NcclComms connects the pairs a permute uses up front.
TEST_F(CudaTest, AFailedDeviceDoesNotLeaveItsPeerWaitingInAPermute) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  expect_a_failed_device_stops_its_peer(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4096,1024] parameter(0)
  cp = f32[4096,1024] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,0}}
  ROOT n = f32[4096,1024] negate(cp)
})");
}

// Multi-process mode (run_as_two_ranks): each rank's results must be the cpu
// backend's results for its device.
TEST_F(CudaTest, OneDevicePerRankMatchesCpu) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  const std::string text = R"(HloModule m, num_partitions=2
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[4,6] parameter(0)
  b = f32[6,8] parameter(1)
  ag = f32[8,6] all-gather(a), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  d = f32[8,8] dot(ag, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ar = f32[8,8] all-reduce(d), channel_id=2, replica_groups={{0,1}}, to_apply=add, use_global_device_ids=true
  cp = f32[4,6] collective-permute(a), channel_id=3, source_target_pairs={{0,1},{1,0}}
  ROOT t = (f32[8,8], f32[4,6]) tuple(ar, cp)
})";
  auto module = hlo::parse_program(text, "ranks.hlo");
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto lowered = sched::lower(*module, {});
  ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
  RunOptions o;
  o.collect_results = true;
  auto cpu = run_cpu(*module, 0, 0, o);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  auto outs = run_as_two_ranks(*lowered, o, 20000 + static_cast<int>(::getpid() % 20000));
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(outs[static_cast<size_t>(r)].is_ok()) << "rank " << r << ": " << outs[r].status().message();
    Both b;
    b.cpu.results = {cpu->results.at(static_cast<size_t>(r))};
    b.cuda.results = outs[static_cast<size_t>(r)]->results;
    SCOPED_TRACE("rank " + std::to_string(r));
    expect_same(b, 1e-5);
  }
}

// Multi-process mode, rank 1 failing before its all-reduce: rank 0's
// all-reduce kernel waits for it on the GPU. Rank 1's run ends and closes its
// rendezvous connection; rank 0 notices (PeerWatch), aborts its communicator
// and fails naming rank 1, instead of hanging.
TEST_F(CudaTest, ARankThatStopsDoesNotLeaveTheOthersWaiting) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  auto module = hlo::parse_program(R"(HloModule m, num_partitions=2
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[4096,1024] parameter(0)
  ar = f32[4096,1024] all-reduce(a), channel_id=1, replica_groups={{0,1}}, to_apply=add, use_global_device_ids=true
  ROOT n = f32[4096,1024] negate(ar)
})", "ranks.hlo");
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto lowered = sched::lower(*module, {});
  ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
  const size_t collective = last_collective(lowered->devices.at(1));
  // Only program device 1 (rank 1) has the failing thunk.
  ASSERT_EQ(setenv("SL_CUDA_FAIL_THUNK", ("1:" + std::to_string(collective)).c_str(), 1), 0);
  RunOptions o;
  o.iterations = 3;
  auto outs = run_as_two_ranks(*lowered, o, 20000 + static_cast<int>((::getpid() + 7) % 20000));
  unsetenv("SL_CUDA_FAIL_THUNK");
  ASSERT_FALSE(outs[1].is_ok());
  EXPECT_NE(outs[1].status().message().find("injected failure"), std::string::npos) << outs[1].status().message();
  ASSERT_FALSE(outs[0].is_ok());
  EXPECT_NE(outs[0].status().message().find("rank 1 stopped"), std::string::npos) << outs[0].status().message();
}

constexpr const char* kAllReduceThenNegate = R"(HloModule m, num_partitions=2
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[4096,1024] parameter(0)
  ar = f32[4096,1024] all-reduce(a), channel_id=1, replica_groups={{0,1}}, to_apply=add, use_global_device_ids=true
  ROOT n = f32[4096,1024] negate(ar)
})";

// kAllReduceThenNegate on 2 GPUs, with device 1's thread set to stop before
// its all-reduce until NCCL is stopped, as a hung rank would (backends made
// during the test read SL_CUDA_HANG_THUNK; TearDown unsets it).
class HungDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
    auto module = hlo::parse_program(kAllReduceThenNegate, "hang.hlo");
    ASSERT_TRUE(module.is_ok()) << module.status().message();
    module_ = std::make_unique<hlo::Module>(std::move(*module));
    auto lowered = sched::lower(*module_, {});
    ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
    lowered_ = std::move(*lowered);
    const size_t collective = last_collective(lowered_.devices.at(1));
    ASSERT_EQ(setenv("SL_CUDA_HANG_THUNK", ("1:" + std::to_string(collective)).c_str(), 1), 0);
  }
  void TearDown() override { unsetenv("SL_CUDA_HANG_THUNK"); }

  std::unique_ptr<hlo::Module> module_;
  sched::LoweredProgram lowered_;
};

// Device 1 hangs before its all-reduce, alive, as a stuck rank would
// (SL_CUDA_HANG_THUNK): device 0's all-reduce kernel waits for it on the GPU,
// and NCCL never times out. After --nccl-timeout without progress the run
// stops NCCL and fails naming the timeout; the GPUs stay usable.
TEST_F(HungDeviceTest, AHungDeviceStopsTheRunAfterTheNcclTimeout) {
  auto hanging = make_cuda_backend({});
  unsetenv("SL_CUDA_HANG_THUNK");
  ASSERT_TRUE(hanging.is_ok()) << hanging.status().message();
  RunOptions o;
  o.iterations = 3;
  o.nccl_timeout_s = 2;
  auto result = (*hanging)->run(lowered_, o);
  ASSERT_FALSE(result.is_ok());
  EXPECT_NE(result.status().message().find("for 2 s (--nccl-timeout)"), std::string::npos)
      << result.status().message();
  expect_the_gpus_still_run(lowered_);
}

// Multi-process: rank 1 hangs before its all-reduce. Rank 0 stops NCCL after
// its --nccl-timeout and fails naming it; its run ending closes its
// rendezvous connection, which stops rank 1 too (PeerWatch). Rank 1 waits
// forever on its own (timeout 0), so only rank 0's watch can end the run.
TEST_F(HungDeviceTest, AHungRankStopsTheOthersAfterTheNcclTimeout) {
  std::array<RunOptions, 2> o;
  o[0].iterations = o[1].iterations = 3;
  o[0].nccl_timeout_s = 2;
  o[1].nccl_timeout_s = 0;
  auto outs = run_as_two_ranks(lowered_, o, 20000 + static_cast<int>((::getpid() + 13) % 20000));
  ASSERT_FALSE(outs[0].is_ok());
  EXPECT_NE(outs[0].status().message().find("for 2 s (--nccl-timeout)"), std::string::npos)
      << outs[0].status().message();
  ASSERT_FALSE(outs[1].is_ok());
  EXPECT_NE(outs[1].status().message().find("injected hang"), std::string::npos)
      << outs[1].status().message();
}

}  // namespace
}  // namespace sl::exec
