// `streamlens capture` on a real GPU: a command of several processes gives a
// run each, a forked copy of the captured process leaves its capture alone,
// and an NVTX range opened before the program first uses CUDA is seen. The
// command is tests/capture/capture_child_main.cc (memsets only). Skipped
// without a GPU.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern char** environ;

namespace sl::capture_test {
namespace {

namespace fs = std::filesystem;

// The build directory: this test is BUILD/tests/capture_tests.
fs::path build_dir() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path();
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

class CaptureCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sl_capture_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const fs::path plugin = build_dir() / "libstreamlens_cuda.so";
    if (std::getenv("STREAMLENS_CUDA_PLUGIN") == nullptr && fs::exists(plugin)) {
      setenv("STREAMLENS_CUDA_PLUGIN", plugin.c_str(), 1);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `streamlens SUBCOMMAND --db DIR/t.db REST`.
  Outcome streamlens(const std::string& subcommand, const std::string& rest) {
    const std::string command = (build_dir() / "app/cli/streamlens").string() + " " + subcommand + " --db " +
                                (dir_ / "t.db").string() + " " + rest + " >" + (dir_ / "out.txt").string() +
                                " 2>" + (dir_ / "err.txt").string();
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(dir_ / "out.txt"), read_text(dir_ / "err.txt")};
  }
  // `capture ARGS -- capture_child CHILD`; false (the test skipped) without a GPU.
  bool capture(const std::string& args, const std::string& child, Outcome* o) {
    *o = streamlens("capture", args + " -- " + (build_dir() / "tests/capture_child").string() + " " + child);
    return o->err.find("no GPU") == std::string::npos;
  }
  // "name<TAB>memsets" a line, one per run, in run order.
  std::string memsets_per_run() {
    Outcome q = streamlens(
        "query", "\"select r.name, count(e.kind) from runs r left join events e on e.run_id = r.id and "
        "e.kind = 'memset' group by r.id order by r.id\"");
    return q.out;
  }

  fs::path dir_;
};

// A launcher's workers each load the injection library: every process that
// ran CUDA is a run of its own, named with its process id (before, all wrote
// one file and the last to finish won).
TEST_F(CaptureCli, EveryProcessOfTheCommandIsARun) {
  Outcome o;
  if (!capture("--name job", "2 --spawn 4 6", &o)) GTEST_SKIP() << "no GPU";
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("3 processes captured, a run each"), std::string::npos) << o.out;
  const std::string runs = memsets_per_run();
  EXPECT_NE(runs.find("job (pid "), std::string::npos) << runs;
  EXPECT_NE(runs.find(")\t2\n"), std::string::npos) << runs;
  EXPECT_NE(runs.find(")\t4\n"), std::string::npos) << runs;
  EXPECT_NE(runs.find(")\t6\n"), std::string::npos) << runs;
  EXPECT_EQ(std::count(runs.begin(), runs.end(), '\n'), 4) << runs;  // the header and 3 runs
}

// A copy forked from the captured process shares its file but not its CUPTI
// session: it writes nothing, and its exit does not flush CUPTI (before, the
// copy's exit hung a torch program's capture).
TEST_F(CaptureCli, AForkedCopyLeavesTheCaptureAlone) {
  Outcome o;
  if (!capture("--name forked", "5 --fork", &o)) GTEST_SKIP() << "no GPU";
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(memsets_per_run(), "name\tcount(e.kind)\nforked\t5\n");
  Outcome bad = streamlens("query", "\"select count(*) from counters where name = 'capture_bad_lines'\"");
  EXPECT_EQ(bad.out, "count(*)\n0\n") << bad.err;
}

// NVTX loads the injection at the program's first NVTX call, before CUDA
// starts: the range pushed then opens the capture (before, it was missed and
// nothing was kept).
TEST_F(CaptureCli, AnNvtxRangeOpenedBeforeCudaStartsIsSeen) {
  Outcome o;
  if (!capture("--name early --capture-range nvtx:early", "5 --nvtx-early early", &o)) GTEST_SKIP() << "no GPU";
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.find("nothing ran inside"), std::string::npos) << o.err;
  EXPECT_EQ(memsets_per_run(), "name\tcount(e.kind)\nearly\t5\n");  // not the 3 after the range
}

// Stopping a capture stops its command, and what the command recorded is
// saved (before, streamlens died at once and the run was lost): SIGTERM to
// streamlens reaches the command as SIGINT, which it ends on normally.
TEST_F(CaptureCli, StoppingTheCaptureSavesWhatTheCommandRecorded) {
  const fs::path ready = dir_ / "ready";
  const std::string streamlens_path = (build_dir() / "app/cli/streamlens").string();
  const std::string child = (build_dir() / "tests/capture_child").string();
  const std::string db = (dir_ / "t.db").string(), out = (dir_ / "out.txt").string();
  std::vector<std::string> words = {streamlens_path, "capture", "--db", db, "--name", "stopped", "--",
                                    child,           "4",       "--until-sigint", ready.string()};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&files);
  for (int waited = 0; !fs::exists(ready) && waited < 3000; ++waited) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) break;  // it ended first: no GPU, say
    usleep(10000);
  }
  if (!fs::exists(ready)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    const std::string said = read_text(out);
    if (said.find("no GPU") != std::string::npos) GTEST_SKIP() << "no GPU";
    FAIL() << "the command never got ready: " << said;
  }
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string said = read_text(out);
  ASSERT_TRUE(WIFEXITED(status)) << "streamlens died of signal " << WTERMSIG(status) << ": " << said;
  EXPECT_EQ(WEXITSTATUS(status), 0) << said;  // the command ended normally on its SIGINT
  EXPECT_NE(said.find("sent SIGINT to"), std::string::npos) << said;
  EXPECT_EQ(memsets_per_run(), "name\tcount(e.kind)\nstopped\t4\n");
}

// A process killed outright runs no exit handler, so the injection library
// never gets to flush CUPTI at its exit: its periodic flush has already
// written what the process recorded (before, such a run had no events).
TEST_F(CaptureCli, AProcessKilledOutrightKeepsWhatItRecorded) {
  setenv("STREAMLENS_FLUSH_MS", "100", 1);
  Outcome o;
  const bool gpu = capture("--name killed", "7 --killed-after-ms 1500", &o);
  unsetenv("STREAMLENS_FLUSH_MS");
  if (!gpu) GTEST_SKIP() << "no GPU";
  EXPECT_EQ(o.exit_code, 3) << o.err;  // the command failed (killed), and the run is saved as failed
  EXPECT_NE(o.out.find("exit status 137"), std::string::npos) << o.out << o.err;
  EXPECT_EQ(memsets_per_run(), "name\tcount(e.kind)\nkilled\t7\n");
}

// A command that never uses CUDA writes no capture: said, exit 3.
TEST_F(CaptureCli, ACommandWithoutCudaCapturesNothing) {
  Outcome o = streamlens("capture", "-- /bin/true");
  if (o.err.find("no GPU") != std::string::npos) GTEST_SKIP() << "no GPU";
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_NE(o.err.find("used no CUDA: nothing was captured"), std::string::npos) << o.err;
}

// CUDA silently drops an injection library it cannot load; the capture
// loads it first and says why, instead of "used no CUDA".
TEST_F(CaptureCli, AnInjectionLibraryThatCannotLoadIsNamed) {
  const fs::path broken = dir_ / "libbroken_inject.so";
  std::ofstream(broken) << "not a shared object";
  setenv("STREAMLENS_INJECT", broken.c_str(), 1);
  Outcome o = streamlens("capture", "-- /bin/true");
  unsetenv("STREAMLENS_INJECT");
  if (o.err.find("no GPU") != std::string::npos) GTEST_SKIP() << "no GPU";
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_NE(o.err.find("libbroken_inject.so cannot be loaded"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace sl::capture_test
