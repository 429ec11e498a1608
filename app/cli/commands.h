#pragma once
// One function per `streamlens` subcommand; each returns the process exit
// code (docs/cli.md). main.cc only parses the command line.

#include <cstdint>
#include <string>
#include <vector>

#include "core/exec/backend.h"

namespace sl::cli {

struct ProgramArgs {
  std::string program;                 // path of the .hlo file
  std::vector<std::string> streams;    // --stream NAME=N
  int64_t replicas = 0;                // 0: the module's replica_count
  int64_t partitions = 0;              // 0: the module's num_partitions
  int64_t max_unroll = 0;              // --max-unroll; 0: sched::LowerOptions' default cap
};

struct RunArgs {
  ProgramArgs program;
  std::string backend = "auto";        // auto | sim | cpu | cuda
  std::string device;                  // "": h200, or with --kernel-times the GPU its capture ran on
  std::string db = "streamlens.db";
  std::string name;
  std::string init = "ramp";
  uint64_t seed = 0;
  std::string results;                 // --results FILE.json
  int warmup = 0;
  int iterations = 1;
  bool json = false;
  bool allow_tf32 = false;
  int comm_sms = exec::kDefaultCommSms;
  int nccl_timeout_s = exec::kDefaultNcclTimeoutS;
  std::string kernel_times;            // --kernel-times RUN: trace-driven sim from a linked capture in --db
  std::string host_costs = "capture";  // --host-costs: capture (from --kernel-times' run) or device (the device file)
  std::string command_buffers = "auto";  // --command-buffers auto|on|off (sim, cuda: how XLA launches the kernels)
};

struct StoreArgs {
  std::string db = "streamlens.db";
  bool json = false;
};

struct QueryArgs {
  std::string db = "streamlens.db";
  std::string sql;                     // one statement; `events` holds every event
  bool csv = false;
  bool json = false;
};

struct MergeArgs {
  std::string out;                     // database that receives the merged run
  std::vector<std::string> inputs;     // IN.db or IN.db:RUN (id, last, last-N)
  std::string name;
  bool allow_overlap = false;          // inputs may share (device, stream) tracks
};

struct CaptureArgs {
  std::string name;
  std::vector<std::string> command;    // after --
  std::string xla_dump;                // --xla-dump DIR: dump XLA's modules there and link the run
  std::string capture_range;           // "", "cudaProfilerApi" or "nvtx:NAME"
  double delay_s = 0;                  // keep records from this long after the start
  double duration_s = 0;              // ... for this long (0: to the end)
};

struct LinkArgs {
  std::string db = "streamlens.db";
  std::string run;                     // captured run: id, last or last-N
  std::string module;                  // XLA's *_gpu_after_optimizations.txt
  std::string thunks;                  // thunk dump; default: the one beside the module
  std::string name;
};

int cmd_check(const ProgramArgs& args);
int cmd_lower(const ProgramArgs& args, int64_t device);
int cmd_run(const RunArgs& args);
int cmd_runs(const StoreArgs& args);
int cmd_show(const StoreArgs& args, const std::string& run);
int cmd_compare(const StoreArgs& args, const std::string& run_a, const std::string& run_b);
int cmd_export(const StoreArgs& args, const std::string& run, const std::string& format, const std::string& out);
int cmd_import(const StoreArgs& args, const std::string& nsys_file, const std::string& name);
int cmd_capture(const StoreArgs& args, const CaptureArgs& capture);
int cmd_calibrate(const StoreArgs& args, const std::vector<std::string>& runs, const std::string& out);
int cmd_merge(const MergeArgs& args);
int cmd_link(const LinkArgs& args);
int cmd_import_capture(const StoreArgs& args, const std::string& file, const std::string& name,
                       const std::string& xla_dump);
int cmd_query(const QueryArgs& args);

}  // namespace sl::cli
