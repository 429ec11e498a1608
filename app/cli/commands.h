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
};

struct RunArgs {
  ProgramArgs program;
  std::string backend = "auto";        // auto | sim | cpu | cuda
  std::string device = "h200";
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

int cmd_check(const ProgramArgs& args);
int cmd_lower(const ProgramArgs& args, int64_t device);
int cmd_run(const RunArgs& args);
int cmd_runs(const StoreArgs& args);
int cmd_show(const StoreArgs& args, const std::string& run);
int cmd_compare(const StoreArgs& args, const std::string& run_a, const std::string& run_b);
int cmd_export(const StoreArgs& args, const std::string& run, const std::string& format, const std::string& out);
int cmd_import(const StoreArgs& args, const std::string& nsys_file, const std::string& name);
int cmd_capture(const StoreArgs& args, const std::string& name, const std::vector<std::string>& command);
int cmd_calibrate(const StoreArgs& args, const std::vector<std::string>& runs, const std::string& out);
int cmd_merge(const MergeArgs& args);
int cmd_query(const QueryArgs& args);

}  // namespace sl::cli
