// Tracer logic on synthetic CUPTI records: no GPU, no CUPTI calls.
#include <cupti_activity.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "cupti_tracer/capture_file.h"
#include "cupti_tracer/collector.h"
#include "cupti_tracer/records.h"
#include "tests/cupti/cupti_records.h"

namespace sl::cupti {
namespace {

using test_records::external_record;
using test_records::kernel_record;

void feed(ActivityCollector& c, const void* record) {
  auto a = decode_activity(reinterpret_cast<const CUpti_Activity*>(record));
  ASSERT_TRUE(a.has_value());
  c.on_activity(*a);
}

TEST(Records, DecodesKernelFields) {
  auto r = kernel_record(1, 7, 42, 1000, 2500, "_Z6add_f32PfS_i");
  auto a = decode_activity(reinterpret_cast<const CUpti_Activity*>(&r));
  ASSERT_TRUE(a.has_value());
  const auto* k = std::get_if<KernelActivity>(&*a);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->device, 1u);
  EXPECT_EQ(k->stream, 7u);
  EXPECT_EQ(k->correlation, 42u);
  EXPECT_EQ(k->start_ns, 1000u);
  EXPECT_EQ(k->end_ns, 2500u);
  EXPECT_EQ(k->name, "_Z6add_f32PfS_i");
  EXPECT_EQ(k->block[0], 256);
}

TEST(Records, DecodesMemcpyMemsetAndExternal) {
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  m.bytes = 4096; m.start = 10; m.end = 20; m.streamId = 3; m.correlationId = 5;
  auto a = decode_activity(reinterpret_cast<const CUpti_Activity*>(&m));
  ASSERT_TRUE(a && std::holds_alternative<MemcpyActivity>(*a));
  EXPECT_EQ(std::get<MemcpyActivity>(*a).bytes, 4096u);
  EXPECT_STREQ(memcpy_kind_name(std::get<MemcpyActivity>(*a).copy_kind), "memcpy DtoD");

  CUpti_ActivityMemset4 s;
  std::memset(&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.bytes = 64; s.value = 0;
  a = decode_activity(reinterpret_cast<const CUpti_Activity*>(&s));
  ASSERT_TRUE(a && std::holds_alternative<MemsetActivity>(*a));
  EXPECT_EQ(std::get<MemsetActivity>(*a).bytes, 64u);

  auto x = external_record(9, 77);
  a = decode_activity(reinterpret_cast<const CUpti_Activity*>(&x));
  ASSERT_TRUE(a && std::holds_alternative<ExternalCorrelationActivity>(*a));
  EXPECT_EQ(std::get<ExternalCorrelationActivity>(*a).external_id, 77u);
  EXPECT_EQ(std::get<ExternalCorrelationActivity>(*a).correlation, 9u);
}

TEST(Records, UnknownKindIsNotDecoded) {
  CUpti_Activity r;
  r.kind = CUPTI_ACTIVITY_KIND_PC_SAMPLING;
  EXPECT_FALSE(decode_activity(&r).has_value());
  EXPECT_FALSE(decode_activity(nullptr).has_value());
}

TEST(Collector, AttributesKernelsThroughExternalIds) {
  ActivityCollector c;
  c.set_time_origin(1000);
  c.map_stream(0, 13, 1);   // CUPTI stream 13 is program compute stream 1
  c.register_launch(100, {.device = 0, .stream = 0, .kind = trace::EventKind::kGemm, .instruction = "dot.1",
                          .flops = 2048, .bytes = 96});
  c.register_launch(101, {.device = 0, .stream = 1, .kind = trace::EventKind::kElementwise, .instruction = "add.2"});
  // Records arrive out of order, external correlation after the kernel.
  auto k2 = kernel_record(0, 13, 6, 1600, 1700, "_ZN2sl4exec13binary_kernelIfEEvPKfS3_Pfl");
  auto k1 = kernel_record(0, 7, 5, 1100, 1500, "sm90_xmma_gemm_bf16");
  feed(c, &k2);
  feed(c, &k1);
  auto x1 = external_record(5, 100);
  auto x2 = external_record(6, 101);
  feed(c, &x1);
  feed(c, &x2);
  c.add_wait_edge(100, 101);

  trace::Trace t = c.build_trace();
  ASSERT_EQ(t.events.size(), 2u);
  const trace::Event& g = t.events[0];
  EXPECT_EQ(t.instruction_of(g), "dot.1");
  EXPECT_EQ(g.kind, trace::EventKind::kGemm);
  EXPECT_EQ(g.start_ns, 100);  // 1100 - origin 1000
  EXPECT_EQ(g.end_ns, 500);
  EXPECT_EQ(g.flops, 2048);
  EXPECT_EQ(g.stream, 0);      // CUPTI stream 7 unmapped: the thunk's stream
  const trace::Event& a = t.events[1];
  EXPECT_EQ(t.instruction_of(a), "add.2");
  EXPECT_EQ(a.stream, 1);
  EXPECT_EQ(t.name_of(a), "sl::exec::binary_kernel");
  ASSERT_EQ(t.dependencies.size(), 1u);
  EXPECT_EQ(t.dependencies[0].from, 0u);
  EXPECT_EQ(t.dependencies[0].to, 1u);
  EXPECT_TRUE(t.counters.empty());
}

TEST(Collector, DropsWarmupAndUnattributedAndCountsThem) {
  ActivityCollector c;
  c.register_launch(1, {.device = 0, .stream = 0, .kind = trace::EventKind::kGemm, .instruction = "g", .keep = false});
  c.register_launch(2, {.device = 0, .stream = 0, .kind = trace::EventKind::kGemm, .instruction = "g",
                        .iteration = 1});
  auto warm = kernel_record(0, 7, 1, 10, 20, "gemm");
  auto real = kernel_record(0, 7, 2, 30, 40, "gemm");
  auto setup = kernel_record(0, 7, 3, 5, 8, "copy");  // no external id
  feed(c, &warm);
  feed(c, &real);
  feed(c, &setup);
  auto x1 = external_record(1, 1);
  auto x2 = external_record(2, 2);
  feed(c, &x1);
  feed(c, &x2);
  c.on_dropped(17);
  c.on_unknown_kind(99);
  trace::Trace t = c.build_trace();
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].iteration, 1);
  auto counter = [&](const std::string& name) -> int64_t {
    for (const auto& k : t.counters) if (k.name == name) return k.value;
    return -1;
  };
  EXPECT_EQ(counter("warmup_records"), 1);
  EXPECT_EQ(counter("records_outside_run"), 1);
  EXPECT_EQ(counter("cupti_dropped_records"), 17);
  EXPECT_EQ(counter("cupti_unknown_activity_kinds"), 1);
}

// Iteration 0 is tagged (external ids through CUPTI's API records); iteration
// 1 is not, and its records are matched to its launches in stream order by
// the shapes iteration 0 showed: a GEMM launch = memset + kernel.
TEST(Collector, AttributesUntaggedLaunchesByStreamOrder) {
  ActivityCollector c;
  c.map_stream(0, 7, 0);
  auto launch = [&](uint64_t id, const char* name, int64_t thunk, int iteration, bool tagged) {
    c.register_launch(id, {.device = 0, .stream = 0, .kind = trace::EventKind::kGemm, .instruction = name,
                           .iteration = iteration, .correlation = thunk, .tagged = tagged});
  };
  launch(1, "dot", 1, 0, true);
  launch(2, "add", 2, 0, true);
  launch(3, "dot", 1, 1, false);
  launch(4, "add", 2, 1, false);
  std::vector<CUpti_ActivityKernel10> records = {
      kernel_record(0, 7, 10, 100, 110, "memset_like"), kernel_record(0, 7, 10, 120, 300, "gemm"),
      kernel_record(0, 7, 11, 310, 320, "add_kernel"),
      // Iteration 1: no external ids; a stray setup kernel first.
      kernel_record(0, 7, 20, 400, 405, "setup"), kernel_record(0, 7, 21, 410, 420, "memset_like"),
      kernel_record(0, 7, 21, 430, 600, "gemm"), kernel_record(0, 7, 22, 610, 620, "add_kernel")};
  for (const auto& r : records) feed(c, &r);
  auto x1 = external_record(10, 1);
  auto x2 = external_record(11, 2);
  feed(c, &x1);
  feed(c, &x2);

  trace::Trace t = c.build_trace();
  ASSERT_EQ(t.events.size(), 6u);
  std::vector<std::pair<std::string, int>> got;
  for (const trace::Event& e : t.events) got.emplace_back(std::string(t.instruction_of(e)), e.iteration);
  const std::vector<std::pair<std::string, int>> want = {{"dot", 0}, {"dot", 0}, {"add", 0},
                                                         {"dot", 1}, {"dot", 1}, {"add", 1}};
  EXPECT_EQ(got, want);
  auto counter = [&](const std::string& name) -> int64_t {
    for (const auto& k : t.counters) if (k.name == name) return k.value;
    return -1;
  };
  EXPECT_EQ(counter("records_by_stream_order"), 3);
  EXPECT_EQ(counter("records_order_mismatch"), 1);  // the stray setup kernel
  EXPECT_EQ(counter("records_outside_run"), 1);
}

// A launch that left fewer records than its shape says does not pull in the
// next launch's records.
TEST(Collector, StreamOrderToleratesAMissingRecord) {
  ActivityCollector c;
  c.map_stream(0, 7, 0);
  c.register_launch(1, {.device = 0, .stream = 0, .instruction = "a", .correlation = 1});
  c.register_launch(2, {.device = 0, .stream = 0, .instruction = "b", .correlation = 2});
  c.register_launch(3, {.device = 0, .stream = 0, .instruction = "a", .iteration = 1, .correlation = 1,
                        .tagged = false});
  c.register_launch(4, {.device = 0, .stream = 0, .instruction = "b", .iteration = 1, .correlation = 2,
                        .tagged = false});
  std::vector<CUpti_ActivityKernel10> records = {
      kernel_record(0, 7, 10, 100, 110, "htod"), kernel_record(0, 7, 10, 120, 130, "ka"),
      kernel_record(0, 7, 11, 140, 150, "kb"),
      kernel_record(0, 7, 20, 200, 210, "ka"),  // no "htod" this time
      kernel_record(0, 7, 21, 220, 230, "kb")};
  for (const auto& r : records) feed(c, &r);
  auto x1 = external_record(10, 1);
  auto x2 = external_record(11, 2);
  feed(c, &x1);
  feed(c, &x2);
  trace::Trace t = c.build_trace();
  ASSERT_EQ(t.events.size(), 5u);
  EXPECT_EQ(t.instruction_of(t.events[3]), "a");
  EXPECT_EQ(t.events[3].iteration, 1);
  EXPECT_EQ(t.instruction_of(t.events[4]), "b");
  EXPECT_EQ(t.events[4].iteration, 1);
}

// A launch whose work runs on a stream of the library's own (NCCL may use
// one): its records there are matched in that stream's order too.
TEST(Collector, StreamOrderFollowsRecordsOntoOtherStreams) {
  ActivityCollector c;
  c.map_stream(0, 7, 100);
  c.register_launch(1, {.device = 0, .stream = 100, .instruction = "ag", .correlation = 1});
  c.register_launch(2, {.device = 0, .stream = 100, .instruction = "ag", .iteration = 1, .correlation = 1,
                        .tagged = false});
  c.register_launch(3, {.device = 0, .stream = 100, .instruction = "ag", .iteration = 2, .correlation = 1,
                        .tagged = false});
  std::vector<CUpti_ActivityKernel10> records = {
      kernel_record(0, 7, 10, 100, 105, "htod"), kernel_record(0, 9, 10, 110, 200, "nccl"),
      kernel_record(0, 7, 20, 300, 305, "htod"), kernel_record(0, 9, 20, 310, 400, "nccl"),
      kernel_record(0, 9, 30, 500, 600, "nccl"), kernel_record(0, 7, 30, 490, 495, "htod")};
  for (const auto& r : records) feed(c, &r);
  auto x = external_record(10, 1);
  feed(c, &x);
  trace::Trace t = c.build_trace();
  ASSERT_EQ(t.events.size(), 6u);
  for (const trace::Event& e : t.events) {
    EXPECT_EQ(t.instruction_of(e), "ag");
    EXPECT_EQ(e.iteration, e.start_ns < 250 ? 0 : e.start_ns < 450 ? 1 : 2) << e.start_ns;
    EXPECT_EQ(e.stream, 100);  // the unmapped stream's work shows on the launch's stream
  }
}

TEST(Collector, MemsetAndCopyKindsWinOverThunkKind) {
  ActivityCollector c;
  c.register_launch(5, {.device = 0, .stream = 100, .kind = trace::EventKind::kCollective, .instruction = "cp"});
  c.register_launch(6, {.device = 0, .stream = 0, .kind = trace::EventKind::kElementwise, .instruction = "dus"});
  MemsetActivity ms{.device = 0, .stream = 3, .correlation = 50, .start_ns = 1, .end_ns = 2, .bytes = 8};
  MemcpyActivity mc{.device = 0, .stream = 4, .correlation = 51, .start_ns = 3, .end_ns = 9, .bytes = 16};
  c.on_activity(ms);
  c.on_activity(mc);
  c.on_activity(ExternalCorrelationActivity{.external_kind = 3, .external_id = 5, .correlation = 50});
  c.on_activity(ExternalCorrelationActivity{.external_kind = 3, .external_id = 6, .correlation = 51});
  trace::Trace t = c.build_trace();
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.events[0].kind, trace::EventKind::kMemset);
  EXPECT_EQ(t.events[0].stream, 100);
  EXPECT_EQ(t.events[0].stream_kind, sched::StreamKind::kCommunication);
  EXPECT_EQ(t.events[1].kind, trace::EventKind::kCopy);
  EXPECT_EQ(t.events[1].bytes, 16);
}

TEST(Collector, ForeignStreamsNumberedByFirstAppearance) {
  ActivityCollector c(CollectorOptions{.keep_unattributed = true});
  auto a = kernel_record(0, 21, 1, 300, 400, "late");
  auto b = kernel_record(0, 7, 2, 100, 200, "early");
  auto d = kernel_record(1, 7, 3, 150, 250, "other_device");
  feed(c, &a);
  feed(c, &b);
  feed(c, &d);
  trace::Trace t = c.build_trace();
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.name_of(t.events[0]), "early");
  EXPECT_EQ(t.events[0].stream, 0);
  EXPECT_EQ(t.events[1].device, 1);
  EXPECT_EQ(t.events[1].stream, 0);
  EXPECT_EQ(t.name_of(t.events[2]), "late");
  EXPECT_EQ(t.events[2].stream, 1);
}

TEST(ShortKernelName, StripsTemplatesAndParameters) {
  EXPECT_EQ(short_kernel_name("_ZN2sl4exec12unary_kernelIfEEvPKfPfl"), "sl::exec::unary_kernel");
  EXPECT_EQ(short_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32"), "sm90_xmma_gemm_bf16bf16_bf16f32");
  EXPECT_EQ(short_kernel_name("void foo<int>(int*)"), "foo");
  // Kernels in an anonymous namespace (the cuda backend's own).
  EXPECT_EQ(short_kernel_name("_ZN2sl4exec4cuda12_GLOBAL__N_119strided_copy_kernelEPviNS1_4ViewEPKviS3_NS1_13DynamicStartsEl"),
            "sl::exec::cuda::strided_copy_kernel");
}

// Registration and records keep their own copies of names: the launcher's
// instruction string and a record's kernel name may be gone by build time.
TEST(Collector, KeepsNamesAfterTheirSourcesAreGone) {
  ActivityCollector c;
  c.map_stream(0, 7, 0);
  for (uint64_t id : {1, 2}) {
    std::string instruction = "a.rather.long.instruction.name." + std::to_string(id);
    c.register_launch(id, {.device = 0, .stream = 0, .kind = trace::EventKind::kGemm, .instruction = instruction});
    std::string kernel = "_ZN2sl4exec13binary_kernelIfEEvPKfS3_Pfl";
    auto k = kernel_record(0, 7, static_cast<uint32_t>(10 + id), 100 * id, 100 * id + 50, kernel.c_str());
    feed(c, &k);
    kernel.assign(kernel.size(), 'x');  // CUPTI's copy would live on; this one does not
    auto x = external_record(static_cast<uint32_t>(10 + id), id);
    feed(c, &x);
  }
  trace::Trace t = c.build_trace();
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.instruction_of(t.events[0]), "a.rather.long.instruction.name.1");
  EXPECT_EQ(t.instruction_of(t.events[1]), "a.rather.long.instruction.name.2");
  EXPECT_EQ(t.name_of(t.events[0]), "sl::exec::binary_kernel");
  EXPECT_EQ(t.events[0].name, t.events[1].name);  // one demangled name, interned once
}

TEST(CaptureFile, RoundTripsThroughJsonLines) {
  std::stringstream file;
  file << capture_meta_line(42, "python3 train.py") << "\n";
  KernelActivity k{.device = 0, .context = 1, .stream = 7, .correlation = 9, .start_ns = 5000, .end_ns = 6000,
                   .name = "_Z3fooPf"};
  MemcpyActivity m{.device = 0, .context = 1, .stream = 9, .correlation = 10, .start_ns = 4000, .end_ns = 4500,
                   .bytes = 1024, .copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD};
  file << capture_line(k) << "\n" << capture_line(m) << "\n";
  file << "{\"k\":\"dropped\",\"n\":3}\n";
  file << "not json\n";
  file << "{\"k\":\"kernel\",\"dev\":0}\n";  // fields missing
  ActivityCollector c(CollectorOptions{.keep_unattributed = true});
  int64_t bad = 0;
  ASSERT_TRUE(read_capture(file, c, &bad).is_ok());
  EXPECT_EQ(bad, 2);
  trace::Trace t = c.build_trace();
  t.normalize_time();
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.events[0].kind, trace::EventKind::kCopy);
  EXPECT_EQ(t.events[0].start_ns, 0);
  EXPECT_EQ(t.events[0].bytes, 1024);
  EXPECT_EQ(t.name_of(t.events[1]), "foo");
  EXPECT_EQ(t.events[1].start_ns, 1000);
  EXPECT_EQ(t.events[1].end_ns, 2000);
  EXPECT_NE(t.events[0].stream, t.events[1].stream);
}

TEST(CaptureFile, ImportCountsBadLinesAndRejectsMissingFile) {
  EXPECT_FALSE(import_capture_file("/nonexistent/streamlens.jsonl").is_ok());
  std::string path = ::testing::TempDir() + "/capture_test.jsonl";
  {
    std::ofstream out(path);
    KernelActivity k{.device = 0, .stream = 7, .start_ns = 10, .end_ns = 30, .name = "k"};
    out << capture_line(k) << "\n" << "garbage\n";
  }
  auto t = import_capture_file(path);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ASSERT_EQ(t->events.size(), 1u);
  EXPECT_EQ(t->events[0].duration_ns(), 20);
  ASSERT_EQ(t->counters.size(), 2u);  // kernels_without_instruction + capture_bad_lines
}

}  // namespace
}  // namespace sl::cupti
