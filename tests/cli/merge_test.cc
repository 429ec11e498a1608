// `streamlens merge`: joins runs from several databases (one per process of a
// multi-process job) into one run, aligned by time_origin_ns, without ever
// modifying the inputs.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/trace/host_probe.h"
#include "core/trace/store/trace_store.h"
#include "tests/cli/cli_test_util.h"

namespace sl::cli_test {
namespace {

namespace fs = std::filesystem;
using trace::Event;
using trace::EventKind;

class Merge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sl-merge-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Outcome sl(const std::string& args) { return streamlens(args, dir_); }
  std::string path(const std::string& name) { return (dir_ / name).string(); }

  // One process's recording: a GEMM on the compute stream, then a collective
  // on the communication stream waiting for it, all on `device`.
  std::string make_rank_db(const std::string& name, int device, const std::string& config_json,
                           int64_t counter_value, int64_t host_probe_ns = 0) {
    std::string db = path(name);
    auto store = trace::TraceStore::open(db);
    EXPECT_TRUE(store) << store.status().message();
    trace::Trace t;
    Event gemm;
    gemm.device = device;
    gemm.stream = 0;
    gemm.kind = EventKind::kGemm;
    gemm.name = t.strings.intern("gemm_kernel_d" + std::to_string(device));
    gemm.instruction = t.strings.intern("g0");
    gemm.start_ns = 0;
    gemm.end_ns = 1000;
    Event coll = gemm;
    coll.stream = 100;
    coll.stream_kind = trace::StreamKind::kCommunication;
    coll.kind = EventKind::kCollective;
    coll.name = t.strings.intern("ncclAllGather");
    coll.instruction = t.strings.intern("ag0");
    coll.start_ns = 1000;
    coll.end_ns = 3000;
    t.events = {gemm, coll};
    t.dependencies = {{0, 1}};
    t.add_counter("dropped_records", counter_value, "records the tracer dropped");
    if (host_probe_ns > 0) {
      t.add_counter(trace::kHostProbeStartCounter, host_probe_ns, trace::kHostProbeDescription);
      t.add_counter(trace::kHostProbeEndCounter, host_probe_ns + 1, trace::kHostProbeDescription);
    }
    trace::RunInfo info;
    info.name = name;
    info.program_name = "m";
    info.backend = "cuda";
    info.device_model = "NVIDIA H200";
    info.num_devices = 1;
    info.config_json = config_json;
    std::vector<sched::StreamAssignmentEntry> streams = {{"g" + std::to_string(device), 0, false, true}};
    auto id = (*store)->save_run(info, "HloModule m_rank" + std::to_string(device) + "\n", streams, t);
    EXPECT_TRUE(id) << id.status().message();
    return db;
  }

  struct Loaded {
    trace::RunInfo info;
    trace::Trace trace;
    std::string program;
    std::vector<sched::StreamAssignmentEntry> streams;
  };
  Loaded load(const std::string& db, int64_t run) {
    auto store = trace::TraceStore::open(db, trace::TraceStore::Mode::kReadOnly);
    EXPECT_TRUE(store) << store.status().message();
    Loaded l;
    l.info = *(*store)->run_info(run);
    l.trace = *(*store)->load_trace(run);
    l.program = *(*store)->program_text(run);
    l.streams = *(*store)->stream_assignment(run);
    return l;
  }
  static const trace::Counter* counter(const trace::Trace& t, const std::string& name) {
    for (const trace::Counter& c : t.counters) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }

  fs::path dir_;
};

TEST_F(Merge, AlignsRanksByTheirTimeOrigin) {
  std::string a = make_rank_db("rank0.db", 0, R"({"time_origin_ns": 5000000, "replicas": 2})", 1);
  std::string b = make_rank_db("rank1.db", 1, R"({"time_origin_ns": 5000500})", 2);
  std::string out = path("merged.db");
  Outcome o = sl("merge " + out + " " + a + " " + b + ":1 --name job");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("merged 2 runs (4 events, 2 devices)"), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "") << "aligned inputs need no warning";

  Loaded m = load(out, 1);
  EXPECT_EQ(m.info.name, "job");
  EXPECT_EQ(m.info.backend, "cuda");
  EXPECT_EQ(m.info.device_model, "NVIDIA H200");
  EXPECT_EQ(m.info.num_devices, 2);
  EXPECT_EQ(trace::run_status_name(m.info.status), std::string("complete"));
  EXPECT_EQ(m.program, "HloModule m_rank0\n") << "the first input's program";
  ASSERT_EQ(m.streams.size(), 1u);
  EXPECT_EQ(m.streams[0].instruction, "g0");
  ASSERT_EQ(m.trace.events.size(), 4u);

  // Rank 1 started its clock 500 ns later: its events move 500 ns right.
  std::map<std::string, const Event*> by_name;
  for (const Event& e : m.trace.events) by_name[m.trace.name_of(e)] = &e;
  EXPECT_EQ(by_name["gemm_kernel_d0"]->start_ns, 0);
  EXPECT_EQ(by_name["gemm_kernel_d1"]->start_ns, 500);
  EXPECT_EQ(by_name["gemm_kernel_d1"]->end_ns, 1500);
  EXPECT_EQ(m.info.makespan_ns, 3500);

  // Each input's edge still joins its own GEMM to its own collective.
  ASSERT_EQ(m.trace.dependencies.size(), 2u);
  std::set<int> edge_devices;
  for (const trace::Dependency& d : m.trace.dependencies) {
    const Event& from = m.trace.events[d.from];
    const Event& to = m.trace.events[d.to];
    EXPECT_EQ(from.device, to.device);
    EXPECT_EQ(from.kind, EventKind::kGemm);
    EXPECT_EQ(to.kind, EventKind::kCollective);
    edge_devices.insert(from.device);
  }
  EXPECT_EQ(edge_devices, (std::set<int>{0, 1}));

  const trace::Counter* dropped = counter(m.trace, "dropped_records");
  ASSERT_NE(dropped, nullptr);
  EXPECT_EQ(dropped->value, 3) << "counters are summed by name";
  EXPECT_EQ(counter(m.trace, "merge_unaligned_inputs"), nullptr);

  auto config = nlohmann::json::parse(m.info.config_json);
  EXPECT_EQ(config["time_origin_ns"], 5000000);
  EXPECT_EQ(config["replicas"], 2) << "the first input's options are kept";
  ASSERT_EQ(config["merged_from"].size(), 2u);
  EXPECT_EQ(config["merged_from"][0]["db"], fs::absolute(a).lexically_normal().string());
  EXPECT_EQ(config["merged_from"][1]["run"], 1);
}

TEST_F(Merge, InputsWithoutTimeOriginAreCountedNotAligned) {
  std::string a = make_rank_db("rank0.db", 0, R"({"time_origin_ns": 5000000})", 1);
  std::string b = make_rank_db("rank1.db", 1, R"({"seed": 3})", 1);
  std::string out = path("merged.db");
  Outcome o = sl("merge " + out + " " + a + " " + b);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("not aligned"), std::string::npos) << o.err;
  Loaded m = load(out, 1);
  for (const Event& e : m.trace.events) {
    if (e.kind == EventKind::kGemm) {
      EXPECT_EQ(e.start_ns, 0) << "times kept as recorded";
    }
  }
  const trace::Counter* unaligned = counter(m.trace, "merge_unaligned_inputs");
  ASSERT_NE(unaligned, nullptr);
  EXPECT_EQ(unaligned->value, 1);
  EXPECT_FALSE(nlohmann::json::parse(m.info.config_json).contains("time_origin_ns"));
}

TEST_F(Merge, CountsAddUpAndTheHostProbeIsTheSlowestProcesss) {
  std::string a = make_rank_db("rank0.db", 0, R"({"time_origin_ns": 5000000})", 2, 1'000'000);
  std::string b = make_rank_db("rank1.db", 1, R"({"time_origin_ns": 5000000})", 3, 2'500'000);
  std::string out = path("merged.db");
  Outcome o = sl("merge " + out + " " + a + " " + b);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  Loaded m = load(out, 1);
  ASSERT_NE(counter(m.trace, "dropped_records"), nullptr);
  EXPECT_EQ(counter(m.trace, "dropped_records")->value, 5);
  // A pace is not a count: 2.5 ms, not 3.5.
  ASSERT_NE(counter(m.trace, "host_probe_start_ns"), nullptr);
  EXPECT_EQ(counter(m.trace, "host_probe_start_ns")->value, 2'500'000);
  EXPECT_EQ(counter(m.trace, "host_probe_end_ns")->value, 2'500'001);
}

TEST_F(Merge, RecordedRunsMergeAndInputsStayByteIdentical) {
  std::string a = path("a.db"), b = path("b.db"), out = path("out.db");
  const std::string program = sample("small/allgather_overlap_gemm.hlo").string();
  ASSERT_EQ(sl("run " + program + " --backend sim --db " + a).exit_code, 0);
  ASSERT_EQ(sl("run " + program + " --backend cpu --db " + b).exit_code, 0);
  ASSERT_EQ(sl("run " + program + " --backend sim --stream gemm=1 --db " + b).exit_code, 0);
  std::string a_bytes = read_file(a), b_bytes = read_file(b);
  ASSERT_FALSE(a_bytes.empty());

  // The same devices recorded twice: refused unless asked for.
  Outcome overlap = sl("merge " + out + " " + a + " " + b + ":1");
  EXPECT_EQ(overlap.exit_code, 1) << overlap.err;
  EXPECT_NE(overlap.err.find("both hold device 0 stream"), std::string::npos) << overlap.err;
  EXPECT_NE(overlap.err.find("--allow-overlap"), std::string::npos) << overlap.err;
  EXPECT_FALSE(fs::exists(out)) << "a refused merge creates nothing";

  Outcome merged = sl("merge " + out + " " + a + " " + b + ":1 --allow-overlap");
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  auto runs = nlohmann::json::parse(sl("runs --json --db " + out).out);
  ASSERT_EQ(runs.size(), 1u);
  auto a_run = nlohmann::json::parse(sl("runs --json --db " + a).out)[0];
  auto b_runs = nlohmann::json::parse(sl("runs --json --db " + b).out);
  ASSERT_EQ(b_runs.size(), 2u);
  const nlohmann::json* b_first = b_runs[0]["id"] == 1 ? &b_runs[0] : &b_runs[1];
  EXPECT_EQ(runs[0]["events"], a_run["events"].get<int64_t>() + (*b_first)["events"].get<int64_t>());
  EXPECT_EQ(runs[0]["devices"], a_run["devices"]) << "both inputs cover the same devices";
  EXPECT_EQ(runs[0]["backend"], "sim");
  Loaded m = load(out, 1);
  const trace::Counter* unaligned = counter(m.trace, "merge_unaligned_inputs");
  ASSERT_NE(unaligned, nullptr) << "sim and cpu runs record no time_origin_ns";
  EXPECT_EQ(unaligned->value, 2);

  // A second merge appends a run; `last` picks b's newest run (the override).
  Outcome again = sl("merge " + out + " " + b + ":last --allow-overlap");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("as run 2"), std::string::npos) << again.out;
  auto config = nlohmann::json::parse(load(out, 2).info.config_json);
  EXPECT_EQ(config["merged_from"][0]["run"], 2);
  ASSERT_EQ(sl("show 2 --json --db " + out).exit_code, 0);

  EXPECT_EQ(read_file(a), a_bytes) << "merge must never modify an input";
  EXPECT_EQ(read_file(b), b_bytes) << "merge must never modify an input";
}

TEST_F(Merge, BadInputsFailCleanly) {
  std::string a = make_rank_db("rank0.db", 0, "{}", 1);
  std::string a_bytes = read_file(a);
  std::string out = path("out.db");

  Outcome missing = sl("merge " + out + " " + a + " " + path("nope.db"));
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_NE(missing.err.find("nope.db"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(path("nope.db")));

  Outcome no_run = sl("merge " + out + " " + a + ":7");
  EXPECT_EQ(no_run.exit_code, 1) << no_run.err;
  EXPECT_FALSE(fs::exists(out));

  std::string junk = path("junk.db");
  { std::ofstream(junk) << "not a database"; }
  EXPECT_EQ(sl("merge " + out + " " + junk).exit_code, 1);
  EXPECT_EQ(read_file(junk), "not a database");

  Outcome into_input = sl("merge " + a + " " + a);
  EXPECT_EQ(into_input.exit_code, 2) << into_input.err;
  EXPECT_NE(into_input.err.find("never modifies its inputs"), std::string::npos) << into_input.err;

  EXPECT_EQ(sl("merge " + out).exit_code, 2) << "no inputs is a usage error";
  EXPECT_EQ(read_file(a), a_bytes);
}

}  // namespace
}  // namespace sl::cli_test
