// Importing a generated file that follows NVIDIA's documented Nsight Systems
// SQLite export schema (StringIds, CUPTI_ACTIVITY_KIND_KERNEL/MEMCPY/MEMSET,
// ENUM_CUDA_MEMCPY_OPER, TARGET_INFO_GPU).

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "core/trace/store/nsys_import.h"
#include "tests/trace/sql_test_util.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::read_bytes;
using testing::ScratchDir;
using testing::write_bytes;

using testing::run_sql;

constexpr const char* kSchema = R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT NOT NULL, busLocation TEXT, totalMemory INT,
  smCount INT NOT NULL, uuid TEXT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,
  contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, demangledName INT NOT NULL,
  shortName INT NOT NULL, mangledName INT, launchType INT, cacheConfig INT, registersPerThread INT NOT NULL,
  gridX INT NOT NULL, gridY INT NOT NULL, gridZ INT NOT NULL, blockX INT NOT NULL, blockY INT NOT NULL,
  blockZ INT NOT NULL, staticSharedMemory INT NOT NULL, dynamicSharedMemory INT NOT NULL,
  localMemoryPerThread INT NOT NULL, localMemoryTotal INT NOT NULL, gridId INT NOT NULL,
  sharedMemoryExecuted INT, graphNodeId INT, sharedMemoryLimitConfig INT);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,
  contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, bytes INT NOT NULL,
  copyKind INT NOT NULL, deprecatedSrcId INT, srcKind INT, dstKind INT, srcDeviceId INT, srcContextId INT,
  dstDeviceId INT, dstContextId INT, migrationCause INT, graphNodeId INT);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,
  contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, value INT NOT NULL,
  bytes INT NOT NULL, graphNodeId INT, memKind INT);
INSERT INTO StringIds VALUES (1, 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64'),
  (2, 'void cutlass::Kernel2<...>(...)'), (3, 'ncclDevKernel_AllGather_RING_LL'),
  (4, 'ncclDevKernel_AllGather_RING_LL(ncclDevComm *, unsigned long, ncclWork *)'),
  (5, 'vectorized_elementwise_kernel'), (6, 'void at::native::vectorized_elementwise_kernel<4>(...)');
INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H200', '0000:18:00.0', 150000000000, 132, 'GPU-0'),
  (1, 'NVIDIA H200', '0000:2a:00.0', 150000000000, 132, 'GPU-1');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'CUDA_MEMCPY_OPER_UNKNOWN', 'Unknown'),
  (1, 'CUDA_MEMCPY_OPER_HTOD', 'Host-to-Device'), (2, 'CUDA_MEMCPY_OPER_DTOH', 'Device-to-Host'),
  (8, 'CUDA_MEMCPY_OPER_DTOD', 'Device-to-Device');
-- device 0: gemm on stream 7, NCCL on stream 13, elementwise on stream 7; device 1: gemm on stream 7
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
  demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory,
  dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) VALUES
  (1000002000, 1001602000, 0, 1, 7, 101, 42, 2, 1, 168, 132, 1, 1, 384, 1, 1, 0, 232448, 0, 0, 1),
  (1000001500, 1001100000, 0, 1, 13, 102, 42, 4, 3, 96, 32, 1, 1, 512, 1, 1, 0, 0, 0, 0, 2),
  (1001602500, 1001612500, 0, 1, 7, 103, 42, 6, 5, 32, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, 3),
  (1000002200, 1001580000, 1, 2, 7, 104, 42, 2, 1, 168, 132, 1, 1, 384, 1, 1, 0, 232448, 0, 0, 4),
  (1000009000, 1000010000, 1, 2, 7, 105, 42, 99, 99, 32, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 5),
  (1000020000, 1000010000, 1, 2, 7, 106, 42, 5, 5, 32, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 6);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes,
  copyKind, srcKind, dstKind) VALUES (1000000000, 1000001000, 0, 1, 7, 100, 42, 4096, 1, 0, 2);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid, value,
  bytes, memKind) VALUES (1000001000, 1000001400, 1, 2, 7, 99, 42, 0, 1024, 2);
)sql";

TEST(NsysImportTest, ImportsKernelsCopiesAndMemsetsOnRenumberedTracks) {
  ScratchDir dir;
  std::string path = dir.file("report.sqlite");
  run_sql(path, kSchema);
  std::string before = read_bytes(path);
  auto run = import_nsys_sqlite(path);
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(before, read_bytes(path));  // opened read-only

  EXPECT_EQ(run->info.backend, "nsys");
  EXPECT_EQ(run->info.device_model, "NVIDIA H200");
  EXPECT_EQ(run->info.num_devices, 2);
  const Trace& t = run->trace;
  // Six kernels minus one with end < start, plus one memcpy and one memset.
  ASSERT_EQ(t.events.size(), 7u);
  // Sorted by start; times relative to the earliest record (the memcpy).
  const Event& copy = t.events[0];
  EXPECT_EQ(copy.kind, EventKind::kCopy);
  EXPECT_EQ(copy.start_ns, 0);
  EXPECT_EQ(copy.end_ns, 1000);
  EXPECT_EQ(copy.bytes, 4096);
  EXPECT_EQ(copy.correlation, 100);
  EXPECT_EQ(t.name_of(copy), "memcpy Host-to-Device");
  EXPECT_EQ(copy.device, 0);
  EXPECT_EQ(copy.stream, 0);

  const Event& memset = t.events[1];
  EXPECT_EQ(memset.kind, EventKind::kMemset);
  EXPECT_EQ(memset.device, 1);
  EXPECT_EQ(memset.bytes, 1024);
  EXPECT_EQ(memset.start_ns, 1000);

  const Event& nccl = t.events[2];
  EXPECT_EQ(t.name_of(nccl), "ncclDevKernel_AllGather_RING_LL");
  EXPECT_EQ(nccl.kind, EventKind::kCollective);
  EXPECT_EQ(nccl.stream, sched::kCommStreamBase);  // stream 13 ran NCCL: communication
  EXPECT_EQ(nccl.stream_kind, StreamKind::kCommunication);
  EXPECT_EQ(nccl.start_ns, 1500);

  const Event& gemm = t.events[3];
  EXPECT_EQ(t.name_of(gemm), "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64");
  EXPECT_EQ(gemm.kind, EventKind::kGemm);
  EXPECT_EQ(gemm.device, 0);
  EXPECT_EQ(gemm.stream, 0);
  EXPECT_EQ(gemm.duration_ns(), 1600000);
  EXPECT_EQ(gemm.correlation, 101);

  EXPECT_EQ(t.events[4].device, 1);
  EXPECT_EQ(t.events[4].kind, EventKind::kGemm);
  EXPECT_EQ(t.name_of(t.events[5]), "kernel#99");  // name id not in StringIds
  EXPECT_EQ(t.events[6].kind, EventKind::kElementwise);
  EXPECT_EQ(t.events[6].end_ns, 1612500);
  EXPECT_EQ(run->info.makespan_ns, 1612500);

  std::map<std::string, int64_t> counters;
  for (const Counter& c : t.counters) counters[c.name] = c.value;
  EXPECT_EQ(counters["nsys_kernel_name_unresolved"], 1);
  EXPECT_EQ(counters["nsys_negative_duration"], 1);
}

TEST(NsysImportTest, MissingOptionalTablesAreCountedNotFatal) {
  ScratchDir dir;
  std::string path = dir.file("kernels_only.sqlite");
  run_sql(path,
          "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
          "INSERT INTO StringIds VALUES (1, 'my_kernel');"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,"
          " contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT,"
          " demangledName INT NOT NULL, shortName INT NOT NULL);"
          "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (500, 900, 3, 1, 21, 1, 1, 1, 1);");
  auto run = import_nsys_sqlite(path);
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  ASSERT_EQ(run->trace.events.size(), 1u);
  EXPECT_EQ(run->trace.events[0].device, 0);  // deviceId 3 renumbered
  EXPECT_EQ(run->trace.events[0].kind, EventKind::kOther);
  EXPECT_EQ(run->trace.events[0].start_ns, 0);
  EXPECT_EQ(run->trace.events[0].end_ns, 400);
  EXPECT_EQ(run->info.device_model, "");
  std::map<std::string, int64_t> counters;
  for (const Counter& c : run->trace.counters) counters[c.name] = c.value;
  EXPECT_EQ(counters["nsys_missing_table_CUPTI_ACTIVITY_KIND_MEMCPY"], 1);
  EXPECT_EQ(counters["nsys_missing_table_CUPTI_ACTIVITY_KIND_MEMSET"], 1);
}

TEST(NsysImportTest, FilesThatAreNotExportsGiveClearErrors) {
  ScratchDir dir;
  std::string foreign = dir.file("foreign.sqlite");
  run_sql(foreign, "CREATE TABLE t (x INT);");
  auto r1 = import_nsys_sqlite(foreign);
  EXPECT_EQ(r1.status().code(), ErrorCode::kInvalidInput);
  EXPECT_NE(r1.status().message().find("not an Nsight Systems SQLite export"), std::string::npos);
  EXPECT_NE(r1.status().message().find(foreign), std::string::npos);

  std::string text = dir.file("report.nsys-rep");
  write_bytes(text, std::string(4096, 'x'));
  auto r2 = import_nsys_sqlite(text);
  EXPECT_EQ(r2.status().code(), ErrorCode::kInvalidInput) << r2.status().message();
  EXPECT_EQ(read_bytes(text), std::string(4096, 'x'));

  std::string no_cuda = dir.file("cpu_only.sqlite");
  run_sql(no_cuda, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);");
  auto r3 = import_nsys_sqlite(no_cuda);
  EXPECT_EQ(r3.status().code(), ErrorCode::kInvalidInput);
  EXPECT_NE(r3.status().message().find("no CUDA kernel"), std::string::npos);

  EXPECT_EQ(import_nsys_sqlite(dir.file("missing.sqlite")).status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace sl::trace
