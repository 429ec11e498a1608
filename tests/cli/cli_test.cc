// End-to-end tests of the `streamlens` command line: exit codes (docs/cli.md),
// recording into a real SQLite file, and the JSON it prints.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_test_util.h"

namespace sl::cli_test {
namespace {

namespace fs = std::filesystem;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sl-cli-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "runs.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  Outcome sl(const std::string& args) { return streamlens(args, dir_); }
  std::string write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(Cli, CheckAcceptsEverySample) {
  for (const auto& entry : fs::directory_iterator(fs::path(SL_SOURCE_DIR) / "samples")) {
    if (entry.path().extension() != ".hlo") continue;
    Outcome o = sl("check " + entry.path().string());
    EXPECT_EQ(o.exit_code, 0) << entry.path() << "\n" << o.err;
    EXPECT_NE(o.out.find(": ok"), std::string::npos) << o.out;
  }
}

TEST_F(Cli, ProgramErrorsAreLocatedAndExitOne) {
  std::string bad = write("bad.hlo", "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] frobnicate(p)\n}\n");
  Outcome o = sl("check " + bad);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("bad.hlo:4:"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("frobnicate"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("^"), std::string::npos) << "caret under the source line:\n" << o.err;

  std::string shape = write("shape.hlo",
                            "HloModule m, num_partitions=4\nadd {\n  a = f32[] parameter(0)\n"
                            "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n"
                            "  p = f32[6] parameter(0)\n"
                            "  ROOT r = f32[1] reduce-scatter(p), dimensions={0}, replica_groups={{0,1,2,3}},"
                            " channel_id=1, use_global_device_ids=true, to_apply=add\n}\n");
  Outcome shaped = sl("check " + shape);
  EXPECT_EQ(shaped.exit_code, 1);
  EXPECT_NE(shaped.err.find("shape.hlo:9:"), std::string::npos) << shaped.err;
  EXPECT_NE(shaped.err.find("not divisible"), std::string::npos) << shaped.err;
  EXPECT_EQ(sl("check " + (dir_ / "missing.hlo").string()).exit_code, 1);
  std::string garbage = write("garbage.hlo", std::string("\x00\xff\x13HloModule {{{", 14));
  EXPECT_EQ(sl("check " + garbage).exit_code, 1);
}

TEST_F(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(sl("").exit_code, 2);
  EXPECT_EQ(sl("frobnicate").exit_code, 2);
  EXPECT_EQ(sl("run " + sample("two_gemms_one_stream.hlo").string() + " --backend gpu").exit_code, 2);
  Outcome o = sl("run " + sample("two_gemms_one_stream.hlo").string() + " --stream gemm1 --db " + db_);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("NAME=N"), std::string::npos) << o.err;
  Outcome timeout = sl("run " + sample("two_gemms_one_stream.hlo").string() + " --nccl-timeout -1 --db " + db_);
  EXPECT_EQ(timeout.exit_code, 2) << timeout.err;
  EXPECT_NE(timeout.err.find("--nccl-timeout"), std::string::npos) << timeout.err;
}

TEST_F(Cli, CudaWithoutGpuExitsThree) {
  if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "a GPU is present";
  Outcome o = sl("run " + sample("small/two_gemms_one_stream.hlo").string() + " --backend cuda --db " + db_);
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_NE(o.err.find("no GPU"), std::string::npos) << o.err;
}

TEST_F(Cli, SimRunIsRecordedAndShownAsDesignJson) {
  Outcome run = sl("run " + sample("allgather_overlap_gemm.hlo").string() + " --backend sim --json --db " + db_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["run"], 1);
  EXPECT_EQ(j["backend"], "sim");
  EXPECT_EQ(j["device_model"], "h200");
  EXPECT_GT(j["makespan_ns"].get<int64_t>(), 0);
  bool saw_gemm = false, saw_collective = false;
  for (const auto& e : j["events"]) {
    for (const char* key : {"device", "stream", "stream_kind", "kind", "name", "instruction", "start_ns", "end_ns"}) {
      EXPECT_TRUE(e.contains(key)) << key;
    }
    saw_gemm |= e["kind"] == "gemm";
    if (e["kind"] == "collective") {
      saw_collective = true;
      EXPECT_EQ(e["stream_kind"], "communication");
    }
  }
  EXPECT_TRUE(saw_gemm);
  EXPECT_TRUE(saw_collective);

  Outcome show = sl("show 1 --json --db " + db_);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(nlohmann::json::parse(show.out), j);

  Outcome runs = sl("runs --json --db " + db_);
  ASSERT_EQ(runs.exit_code, 0);
  auto list = nlohmann::json::parse(runs.out);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["status"], "complete");
}

TEST_F(Cli, MovingAGemmToAnotherStreamChangesTheSimulatedMakespan) {
  const std::string program = sample("two_gemms_one_stream.hlo").string();
  ASSERT_EQ(sl("run " + program + " --backend sim --db " + db_).exit_code, 0);
  ASSERT_EQ(sl("run " + program + " --backend sim --stream gemm1=1 --db " + db_).exit_code, 0);
  Outcome cmp = sl("compare last-1 last --json --db " + db_);
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  auto j = nlohmann::json::parse(cmp.out);
  int64_t a = j["a"]["makespan_ns"], b = j["b"]["makespan_ns"];
  // Two saturating GEMMs side by side finish later than one after the other
  // (H200: 3.29 ms on one stream, 3.58 ms on two; docs/simulator.md).
  EXPECT_GT(b, a);
  EXPECT_FALSE(j["deltas"].empty());

  Outcome lowered = sl("lower " + program + " --stream gemm1=1");
  ASSERT_EQ(lowered.exit_code, 0);
  EXPECT_NE(lowered.out.find("s1"), std::string::npos) << lowered.out;
}

// The permute is launched after a GEMM on every SM: the simulator makes it
// wait, says so, and moving it to the GEMM's stream costs nothing more.
TEST_F(Cli, APermuteBehindAGemmOnEverySmIsReported) {
  const std::string program = sample("permute_behind_gemm.hlo").string();
  Outcome behind = sl("run " + program + " --backend sim --json --db " + db_);
  ASSERT_EQ(behind.exit_code, 0) << behind.err;
  EXPECT_NE(behind.err.find("1 collective(s) launched after a GEMM that holds every SM"), std::string::npos)
      << behind.err;
  Outcome serial = sl("run " + program + " --backend sim --json --stream cp-start=1 --db " + db_);
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  EXPECT_EQ(serial.err.find("holds every SM"), std::string::npos) << serial.err;
  // The summary's top kernels leave the simulator's waits out.
  Outcome text = sl("run " + program + " --backend sim --db " + db_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("collective-permute"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("wait for SMs"), std::string::npos) << text.out;
  int64_t held = nlohmann::json::parse(behind.out)["makespan_ns"];
  int64_t on_one_stream = nlohmann::json::parse(serial.out)["makespan_ns"];
  EXPECT_NEAR(static_cast<double>(held), static_cast<double>(on_one_stream),
              0.01 * static_cast<double>(on_one_stream));
}

TEST_F(Cli, CpuRunWritesResultsJson) {
  std::string results = (dir_ / "out.json").string();
  Outcome o = sl("run " + sample("small/tuple_reduce_scatter.hlo").string() + " --backend cpu --results " +
                 results + " --db " + db_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = nlohmann::json::parse(read_file(results));
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][1]["device"], 1);
  EXPECT_TRUE(j["devices"][0]["outputs"][0].contains("shape"));
  EXPECT_TRUE(j["devices"][0]["outputs"][0]["values"].is_array());
}

TEST_F(Cli, ExportsChromeTraceAndCsv) {
  ASSERT_EQ(sl("run " + sample("two_gemms_two_streams.hlo").string() + " --backend sim --db " + db_).exit_code, 0);
  std::string chrome = (dir_ / "t.json").string(), csv = (dir_ / "t.csv").string();
  ASSERT_EQ(sl("export last --format chrome -o " + chrome + " --db " + db_).exit_code, 0);
  auto j = nlohmann::json::parse(read_file(chrome));
  EXPECT_TRUE(j.contains("traceEvents"));
  ASSERT_EQ(sl("export 1 --format csv -o " + csv + " --db " + db_).exit_code, 0);
  EXPECT_EQ(read_file(csv).rfind("device,stream", 0), 0u);
  EXPECT_EQ(sl("export 7 --format csv -o " + csv + " --db " + db_).exit_code, 1);
}

TEST_F(Cli, ForeignOrCorruptDatabaseExitsOneAndIsNotTouched) {
  std::string text = std::string("SQLite format 3") + std::string(1, '\0') + std::string(200, 'x');
  std::string corrupt = write("corrupt.db", text);
  Outcome o = sl("run " + sample("two_gemms_one_stream.hlo").string() + " --backend sim --db " + corrupt);
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("corrupt.db"), std::string::npos) << o.err;
  EXPECT_EQ(read_file(corrupt), text);
  EXPECT_EQ(sl("runs --db " + corrupt).exit_code, 1);
  EXPECT_EQ(sl("runs --db " + (dir_ / "nope.db").string()).exit_code, 1);
  EXPECT_FALSE(fs::exists(dir_ / "nope.db"));
}

// A module without device counts whose groups need four replicas.
constexpr const char* kFourReplicaGather =
    "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
    "  ROOT g = f32[8] all-gather(p), replica_groups={{0,1,2,3}}, dimensions={0}\n}\n";

TEST_F(Cli, MissingDeviceCountsAreInferredWithANote) {
  std::string program = write("gather.hlo", kFourReplicaGather);
  Outcome o = sl("check " + program);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("4 replicas x 1 partitions"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("gather.hlo:4:8: note:"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("replica_count is taken as 4"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("error"), std::string::npos) << o.err;
}

TEST_F(Cli, DeviceCountFlagsApplyBeforeVerificationOnEverySubcommand) {
  std::string declared = write("declared.hlo", std::string(kFourReplicaGather).replace(0, 11, "HloModule m, replica_count=2"));
  // The header's two replicas are too few for the group ...
  Outcome bad = sl("check " + declared);
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("replica_count is 2"), std::string::npos) << bad.err;
  // ... and --replicas replaces them before the verifier looks.
  for (const std::string& command : {std::string("check "), std::string("lower "),
                                     std::string("run --backend sim --db " + db_ + " ")}) {
    Outcome o = sl(command + declared + " --replicas 4");
    EXPECT_EQ(o.exit_code, 0) << command << "\n" << o.err;
  }
  Outcome lowered = sl("lower " + declared + " --replicas 4 --device-id 3");
  EXPECT_EQ(lowered.exit_code, 0) << lowered.err;
  // A flag smaller than the groups need is an error, not an inference.
  Outcome small = sl("check " + write("gather.hlo", kFourReplicaGather) + " --replicas 2");
  EXPECT_EQ(small.exit_code, 1) << small.err;
}

TEST_F(Cli, RealTwoDeviceDumpsDeclareTwoPartitions) {
  for (const char* program : {"fsdp_step/module_0000.jit_fsdp_step", "dp_allreduce_step/module_0000.jit_dp_step"}) {
    fs::path path = fs::path(SL_SOURCE_DIR) / "tests/corpus/jax/small" /
                    (std::string(program) + ".sm_9.0a_gpu_after_optimizations.txt");
    Outcome o = sl("check " + path.string());
    EXPECT_EQ(o.exit_code, 0) << path << "\n" << o.err;
    EXPECT_NE(o.out.find("1 replicas x 2 partitions"), std::string::npos) << o.out;
  }
}

TEST_F(Cli, HugeTripCountsStopAtTheUnrollCap) {
  const std::string text =
      "HloModule m\nbody {\n  p = (s32[], f32[8]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  v = f32[8] get-tuple-element(p), index=1\n  n = f32[8] negate(v)\n  ROOT t = (s32[], f32[8]) tuple(i, n)\n}\n"
      "cond {\n  p = (s32[], f32[8]) parameter(0)\n  ROOT c = pred[] constant(true)\n}\nENTRY e {\n"
      "  x = f32[8] parameter(0)\n  z = s32[] constant(0)\n  init = (s32[], f32[8]) tuple(z, x)\n"
      "  w = (s32[], f32[8]) while(init), condition=cond, body=body, "
      "backend_config={\"known_trip_count\":{\"n\":\"1000000000000\"}}\n"
      "  ROOT r = f32[8] get-tuple-element(w), index=1\n}\n";
  std::string program = write("huge.hlo", text);
  for (const std::string& command : {std::string("lower "), std::string("run --backend sim --db " + db_ + " ")}) {
    Outcome o = sl(command + program);
    EXPECT_EQ(o.exit_code, 1) << command << o.err;
    EXPECT_NE(o.err.find("huge.hlo:17:3: error: while %w runs 1000000000000 trips"), std::string::npos) << o.err;
  }
  std::string small = write("small.hlo", std::string(text).replace(text.find("1000000000000"), 13, "2000"));
  EXPECT_EQ(sl("lower " + small + " --max-unroll 1000").exit_code, 1);
  EXPECT_EQ(sl("lower " + small + " --max-unroll 3000").exit_code, 0);
}

TEST_F(Cli, CaptureWithoutGpuExitsThree) {
  if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "a GPU is present";
  Outcome o = sl("capture --db " + db_ + " -- /bin/true");
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_NE(o.err.find("no GPU"), std::string::npos) << o.err;
}

// Refused before anything runs, so with or without a GPU.
TEST_F(Cli, CaptureRangeNamesWhatItKeeps) {
  Outcome empty = sl("capture --db " + db_ + " --capture-range nvtx: -- /bin/true");
  EXPECT_EQ(empty.exit_code, 2) << empty.err;
  EXPECT_NE(empty.err.find("cudaProfilerApi or nvtx:NAME"), std::string::npos) << empty.err;
  Outcome other = sl("capture --db " + db_ + " --capture-range nvtx -- /bin/true");
  EXPECT_EQ(other.exit_code, 2) << other.err;
  setenv("NVTX_INJECTION64_PATH", "/another/tool.so", 1);
  Outcome taken = sl("capture --db " + db_ + " --capture-range nvtx:train -- /bin/true");
  unsetenv("NVTX_INJECTION64_PATH");
  EXPECT_EQ(taken.exit_code, 2) << taken.err;
  EXPECT_NE(taken.err.find("NVTX_INJECTION64_PATH"), std::string::npos) << taken.err;
  EXPECT_FALSE(fs::exists(db_)) << "nothing is written for a refused capture";
}

}  // namespace
}  // namespace sl::cli_test
