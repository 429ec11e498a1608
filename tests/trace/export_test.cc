// Chrome trace JSON (parsed back with nlohmann::json), CSV, and the
// run/show JSON object of docs/cli.md.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/trace/export.h"
#include "core/trace/report.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::add_event;
using testing::read_bytes;
using testing::ScratchDir;
using testing::kComm;

RunInfo info() {
  RunInfo i;
  i.id = 7;
  i.name = "two streams";
  i.backend = "sim";
  i.device_model = "h200";
  i.num_devices = 2;
  i.status = RunStatus::kComplete;
  return i;
}

// Times start at 1000 ns so the exporters' shift to the first event shows.
Trace sample() {
  Trace t;
  uint32_t g = add_event(t, 0, 0, EventKind::kGemm, "gemm_bf16", "g0", 1000, 2500, 4096, 1 << 20);
  uint32_t ag = add_event(t, 0, kComm, EventKind::kCollective, "all-gather", "ag-start", 1500, 3000, 1 << 16);
  uint32_t w = add_event(t, 0, 0, EventKind::kWait, "wait", "ag-done", 3000, 3000);
  add_event(t, 1, 1, EventKind::kElementwise, "add, fused \"x\"", "a1", 1200, 1300);
  t.dependencies.push_back({ag, w});
  t.dependencies.push_back({g, w});
  return t;
}

TEST(ChromeExportTest, StructureOpensInPerfetto) {
  auto j = nlohmann::json::parse(chrome_trace_json(info(), sample()));
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::map<int, std::string> process_names;
  std::map<std::pair<int, int>, std::string> thread_names;
  std::vector<nlohmann::json> slices, flow_starts, flow_ends;
  for (const auto& e : j["traceEvents"]) {
    std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
    if (ph == "M" && e["name"] == "thread_name") thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (ph == "X") slices.push_back(e);
    if (ph == "s") flow_starts.push_back(e);
    if (ph == "f") flow_ends.push_back(e);
  }
  EXPECT_EQ(process_names[0], "GPU 0");
  EXPECT_EQ(process_names[1], "GPU 1");
  EXPECT_EQ((thread_names[{0, 0}]), "stream 0 (compute)");
  EXPECT_EQ((thread_names[{0, kComm}]), "stream 100 (communication)");
  EXPECT_EQ((thread_names[{1, 1}]), "stream 1 (compute)");
  ASSERT_EQ(slices.size(), 4u);
  // Display order: by start. gemm first at ts 0 µs, 1.5 µs long.
  EXPECT_EQ(slices[0]["name"], "gemm_bf16");
  EXPECT_EQ(slices[0]["cat"], "gemm");
  EXPECT_DOUBLE_EQ(slices[0]["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(slices[0]["dur"].get<double>(), 1.5);
  EXPECT_EQ(slices[0]["pid"], 0);
  EXPECT_EQ(slices[0]["tid"], 0);
  EXPECT_EQ(slices[0]["args"]["instruction"], "g0");
  EXPECT_EQ(slices[0]["args"]["bytes"], 4096);
  EXPECT_EQ(slices[0]["args"]["flops"], 1 << 20);
  EXPECT_DOUBLE_EQ(slices[1]["ts"].get<double>(), 0.2);  // the add on GPU 1
  EXPECT_DOUBLE_EQ(slices[1]["dur"].get<double>(), 0.1);
  EXPECT_EQ(slices[2]["tid"], kComm);

  ASSERT_EQ(flow_starts.size(), 2u);
  ASSERT_EQ(flow_ends.size(), 2u);
  std::set<uint64_t> ids;
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(flow_starts[k]["id"], flow_ends[k]["id"]);
    ids.insert(flow_starts[k]["id"].get<uint64_t>());
    EXPECT_EQ(flow_ends[k]["bp"], "e");
    EXPECT_EQ(flow_ends[k]["tid"], 0);  // into the wait on stream 0
    EXPECT_DOUBLE_EQ(flow_ends[k]["ts"].get<double>(), 2.0);
  }
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(flow_starts[0]["tid"], kComm);
  EXPECT_DOUBLE_EQ(flow_starts[0]["ts"].get<double>(), 0.5);
  EXPECT_EQ(j["otherData"]["run"], 7);
}

TEST(CsvExportTest, HeaderAndOneQuotedRowPerEvent) {
  std::string csv = trace_csv(sample());
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0],
            "device,stream,stream_kind,kind,name,instruction,start_ns,end_ns,duration_ns,bytes,flops,correlation,"
            "iteration");
  EXPECT_EQ(lines[1], "0,0,compute,gemm,gemm_bf16,g0,0,1500,1500,4096,1048576,1,0");
  EXPECT_EQ(lines[2], "1,1,compute,elementwise,\"add, fused \"\"x\"\"\",a1,200,300,100,0,0,4,0");
}

TEST(ExportTest, WritesFilesAndRejectsUnknownFormats) {
  ScratchDir dir;
  ASSERT_TRUE(export_run(info(), sample(), ExportFormat::kCsv, dir.file("t.csv")).is_ok());
  EXPECT_EQ(read_bytes(dir.file("t.csv")), trace_csv(sample()));
  ASSERT_TRUE(export_run(info(), sample(), ExportFormat::kChrome, dir.file("t.json")).is_ok());
  EXPECT_TRUE(nlohmann::json::parse(read_bytes(dir.file("t.json"))).contains("traceEvents"));
  EXPECT_EQ(export_run(info(), sample(), ExportFormat::kCsv, dir.file("no/such/dir.csv")).code(),
            ErrorCode::kRuntime);
  EXPECT_EQ(parse_export_format("chrome").value(), ExportFormat::kChrome);
  EXPECT_EQ(parse_export_format("perfetto").status().code(), ErrorCode::kUsage);
}

TEST(RunJsonTest, ExactlyTheDesignObject) {
  auto j = nlohmann::json::parse(run_json(info(), sample()));
  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  EXPECT_EQ(keys, (std::set<std::string>{"run", "backend", "device_model", "makespan_ns", "events"}));
  EXPECT_EQ(j["run"], 7);
  EXPECT_EQ(j["backend"], "sim");
  EXPECT_EQ(j["device_model"], "h200");
  EXPECT_EQ(j["makespan_ns"], 2000);
  ASSERT_EQ(j["events"].size(), 4u);
  const auto& e = j["events"][0];
  std::set<std::string> event_keys;
  for (auto it = e.begin(); it != e.end(); ++it) event_keys.insert(it.key());
  EXPECT_EQ(event_keys, (std::set<std::string>{"device", "stream", "stream_kind", "kind", "name", "instruction",
                                               "start_ns", "end_ns"}));
  EXPECT_EQ(e["kind"], "gemm");
  EXPECT_EQ(e["instruction"], "g0");
  EXPECT_EQ(e["start_ns"], 0);
  EXPECT_EQ(e["end_ns"], 1500);
  EXPECT_EQ(j["events"][2]["stream"], kComm);
  EXPECT_EQ(j["events"][2]["stream_kind"], "communication");
}

TEST(ReportTest, ShowAndRunsTextCarryTheEssentials) {
  std::string show = format_show_text(info(), sample());
  EXPECT_NE(show.find("DEVICE  STREAM"), std::string::npos) << show;
  EXPECT_NE(show.find("gemm_bf16"), std::string::npos);
  EXPECT_NE(show.find("1.500"), std::string::npos);  // gemm duration in µs
  EXPECT_NE(show.find("critical path"), std::string::npos);
  std::string limited = format_show_text(info(), sample(), 2);
  EXPECT_NE(limited.find("... 2 more events"), std::string::npos);
  std::string runs = format_runs_table({info()});
  EXPECT_NE(runs.find("two streams"), std::string::npos);
  EXPECT_NE(runs.find("complete"), std::string::npos);
  EXPECT_EQ(format_runs_table({}), "no runs\n");
  EXPECT_EQ(format_us(1234567), "1234.567");
  EXPECT_EQ(format_us(-80), "-0.080");
}

}  // namespace
}  // namespace sl::trace
