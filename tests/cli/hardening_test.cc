// Hostile inputs through the real `streamlens` binary (README.md, "What streamlens promises"):
// each test reproduces one defect found by probing, and checks the clean
// error (exit code, message) and that the database survives.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/cli/terminal.h"
#include "tests/cli/cli_test_util.h"

namespace sl::cli_test {
namespace {

namespace fs = std::filesystem;

class Hardening : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sl-hard-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "runs.db").string();
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  Outcome sl(const std::string& args) { return streamlens(args, dir_); }
  std::string write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // One recorded sim run in db_.
  void record() {
    Outcome o = sl("run " + sample("two_gemms_two_streams.hlo").string() + " --backend sim --db " + db_);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  size_t run_count(const std::string& db) {
    Outcome o = sl("runs --json --db " + db);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    auto j = nlohmann::json::parse(o.out, nullptr, false);
    return j.is_array() ? j.size() : 0;
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(Hardening, ExportOntoTheDatabaseIsRefused) {
  record();
  for (const std::string& target : {db_, db_ + "-wal", db_ + "-shm"}) {
    Outcome o = sl("export last --format chrome -o " + target + " --db " + db_);
    EXPECT_EQ(o.exit_code, 2) << target << ": " << o.err;
    EXPECT_NE(o.err.find("refusing to write over it"), std::string::npos) << o.err;
  }
  EXPECT_EQ(run_count(db_), 1u);
}

TEST_F(Hardening, ResultsOntoTheDatabaseOrTheProgramAreRefused) {
  record();
  std::string program = write("p.hlo", read_file(sample("small/tuple_reduce_scatter.hlo")));
  Outcome onto_db = sl("run " + program + " --backend cpu --results " + db_ + " --db " + db_);
  EXPECT_EQ(onto_db.exit_code, 2) << onto_db.err;
  Outcome onto_program = sl("run " + program + " --backend cpu --results " + program + " --db " + db_);
  EXPECT_EQ(onto_program.exit_code, 2) << onto_program.err;
  EXPECT_EQ(read_file(program), read_file(sample("small/tuple_reduce_scatter.hlo")));
  EXPECT_EQ(run_count(db_), 1u);  // neither attempt recorded anything
}

TEST_F(Hardening, InvalidUtf8InANameStaysValidJson) {
  Outcome o = sl("run " + sample("two_gemms_two_streams.hlo").string() + " --backend sim --name \"$(printf '\\377\\376')\" --db " +
                 db_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  Outcome runs = sl("runs --json --db " + db_);
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  auto j = nlohmann::json::parse(runs.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << runs.out;
  EXPECT_EQ(j[0]["name"], "\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD twice
  Outcome show = sl("show last --json --db " + db_);
  EXPECT_EQ(show.exit_code, 0) << show.err;
  std::string chrome = (dir_ / "t.json").string();
  ASSERT_EQ(sl("export last -o " + chrome + " --db " + db_).exit_code, 0);
  EXPECT_FALSE(nlohmann::json::parse(read_file(chrome), nullptr, false).is_discarded());
}

TEST_F(Hardening, DbIsAPlainPath) {
  const std::string program = sample("two_gemms_one_stream.hlo").string();
  for (const std::string& db : {std::string("''"), std::string(":memory:"), "file:" + (dir_ / "x.db").string()}) {
    Outcome o = sl("run " + program + " --backend sim --db " + db);
    EXPECT_EQ(o.exit_code, 2) << db << ": " << o.err;
    EXPECT_EQ(sl("runs --db " + db).exit_code, 2) << db;
  }
  EXPECT_FALSE(fs::exists(dir_ / "x.db"));
  // A file really named "file:..." is reached as ./file:...
  std::string cwd_relative = "cd " + dir_.string() + " && " + SL_STREAMLENS + " run " + program +
                             " --backend sim --db ./file:y.db >/dev/null 2>&1";
  EXPECT_EQ(std::system(cwd_relative.c_str()), 0);
  EXPECT_TRUE(fs::exists(dir_ / "file:y.db"));
}

TEST_F(Hardening, AnEmptyFileBecomesAStoreWithANote) {
  write("empty.db", "");
  std::string empty = (dir_ / "empty.db").string();
  Outcome o = sl("run " + sample("two_gemms_one_stream.hlo").string() + " --backend sim --db " + empty);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("was an empty (0-byte) file"), std::string::npos) << o.err;
  EXPECT_EQ(run_count(empty), 1u);
}

// As root, the checks run as `nobody` (setpriv), who owns neither the
// directory nor the database: the second user of the probe.
std::string as_other_user() {
  return ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
}

TEST_F(Hardening, ReadingWorksInAReadOnlyDirectoryAndLeavesNoFiles) {
  record();
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                            fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  std::string out = (fs::temp_directory_path() / ("sl-hard-ro-" + std::to_string(::getpid()))).string();
  std::string command = as_other_user() + SL_STREAMLENS + " runs --db " + db_ + " >" + out + " 2>&1";
  int status = std::system(command.c_str());
  std::string printed = read_file(out);
  fs::remove(out);
  EXPECT_EQ(WEXITSTATUS(status), 0) << printed;
  EXPECT_NE(printed.find("two_gemms"), std::string::npos) << printed;
  EXPECT_FALSE(fs::exists(db_ + "-wal"));
  EXPECT_FALSE(fs::exists(db_ + "-shm"));
}

TEST_F(Hardening, ASecondUserReadingLeavesNothingThatStopsTheOwner) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as a second user";
  record();
  fs::permissions(dir_, fs::perms::all);  // like /tmp: anyone may create files here
  fs::permissions(db_, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                           fs::perms::others_read);
  std::string command = as_other_user() + SL_STREAMLENS + " runs --db " + db_ + " >/dev/null 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(command.c_str())), 0);
  EXPECT_FALSE(fs::exists(db_ + "-wal"));
  EXPECT_FALSE(fs::exists(db_ + "-shm"));
  record();  // the owner still writes
  EXPECT_EQ(run_count(db_), 2u);
}

TEST_F(Hardening, DeviceNodesDirectoriesAndHugeFilesAreRefused) {
  EXPECT_EQ(sl("check /dev/zero").exit_code, 1);
  EXPECT_EQ(sl("check " + dir_.string()).exit_code, 1);
  Outcome device = sl("run " + sample("two_gemms_one_stream.hlo").string() + " --backend sim --device /dev/zero --db " +
                      db_);
  EXPECT_EQ(device.exit_code, 1) << device.err;
  fs::path huge = dir_ / "huge.hlo";
  std::ofstream(huge).put('x');
  fs::resize_file(huge, (size_t{256} << 20) + 1);  // sparse: nothing is written
  Outcome big = sl("check " + huge.string());
  EXPECT_EQ(big.exit_code, 1);
  EXPECT_NE(big.err.find("larger than the limit"), std::string::npos) << big.err;
  Outcome dir = sl("import " + dir_.string() + " --db " + db_);
  EXPECT_EQ(dir.exit_code, 1) << dir.err;
}

TEST_F(Hardening, AProgramIsReadFromAPipe) {
  std::string command = "cat " + sample("two_gemms_one_stream.hlo").string() + " | " + SL_STREAMLENS +
                        " check /dev/stdin >/dev/null 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(command.c_str())), 0);
}

TEST_F(Hardening, AHugeLineIsNotEchoedWhole) {
  std::string line = "HloModule m\n\nENTRY e {\n  %p = f32[2] parameter(0)" + std::string(10 << 20, ' ') + "@\n}\n";
  Outcome o = sl("check " + write("long.hlo", line));
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_LT(o.err.size(), 4096u) << o.err.substr(0, 300);
  EXPECT_NE(o.err.find("long.hlo:4:"), std::string::npos) << o.err.substr(0, 300);
}

TEST_F(Hardening, StreamMessageNamesTheValuesItAccepts) {
  Outcome o = sl("lower " + sample("two_gemms_one_stream.hlo").string() + " --stream x=116");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("100..115"), std::string::npos) << o.err;
}

TEST_F(Hardening, DeepCallRecursionIsLocated) {
  std::string text = "HloModule deep\n\n";
  const int depth = 600;
  text += fmt::format("c{} {{\n  ROOT p = f32[] parameter(0)\n}}\n\n", depth);
  for (int i = depth - 1; i >= 1; --i) {
    text += fmt::format("c{} {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c{}\n}}\n\n", i, i + 1);
  }
  text += "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c1\n}\n";
  Outcome o = sl("lower " + write("deep.hlo", text));
  EXPECT_EQ(o.exit_code, 1) << o.err.substr(0, 300);
  EXPECT_NE(o.err.find("deep.hlo:"), std::string::npos) << o.err.substr(0, 300);
  EXPECT_NE(o.err.find("nest deeper than"), std::string::npos) << o.err.substr(0, 300);
}

TEST(TerminalText, ControlCharactersAreEscaped) {
  EXPECT_EQ(cli::escape_controls("a\x1b]0;pwned\x07z"), "a\\x1B]0;pwned\\x07z");
  EXPECT_EQ(cli::escape_controls("line\n\ttab"), "line\n\ttab");
  EXPECT_EQ(cli::escape_controls("\xc2\x9b" "2J"), "\\xC2\\x9B2J");  // C1 CSI
  EXPECT_EQ(cli::escape_controls("caf\xc3\xa9 \x7f"), "caf\xc3\xa9 \\x7F");
}

TEST_F(Hardening, EscapeCodesInNamesDoNotReachATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1) for a pseudo-terminal";
  ASSERT_EQ(sl("run " + sample("two_gemms_one_stream.hlo").string() + " --backend sim --name \"$(printf 'x\\033]0;pwned\\007')\" --db " +
               db_).exit_code, 0);
  std::string out = (dir_ / "tty.txt").string();
  std::string command = "script -qec '" + std::string(SL_STREAMLENS) + " runs --db " + db_ + "' /dev/null >" + out;
  ASSERT_EQ(WEXITSTATUS(std::system(command.c_str())), 0);
  std::string printed = read_file(out);
  EXPECT_EQ(printed.find('\x1b'), std::string::npos);
  EXPECT_NE(printed.find("\\x1B]0;pwned"), std::string::npos) << printed;
}

// A program the cpu backend takes seconds on (a naive 1024^3 GEMM), so a
// signal arrives while the run records.
std::string slow_program() {
  return "HloModule slow\n\nENTRY e {\n  a = f32[1024,1024] parameter(0)\n  b = f32[1024,1024] parameter(1)\n"
         "  ROOT d = f32[1024,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
}

std::string status_of_last(const std::string& db, const fs::path& dir) {
  Outcome o = streamlens("runs --json --db " + db, dir);
  auto j = nlohmann::json::parse(o.out, nullptr, false);
  if (!j.is_array() || j.empty()) return "";
  return j.back()["status"].get<std::string>();
}

void kill_while_running(const std::string& program, const std::string& db, const fs::path& dir, int sig) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    FILE* quiet = std::freopen("/dev/null", "w", stderr);
    (void)quiet;
    execl(SL_STREAMLENS, SL_STREAMLENS, "run", program.c_str(), "--backend", "cpu", "--db", db.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (status_of_last(db, dir) != "running" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(status_of_last(db, dir), "running");
  kill(child, sig);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
}

TEST_F(Hardening, ASignalledRunIsInterrupted) {
  std::string program = write("slow.hlo", slow_program());
  kill_while_running(program, db_, dir_, SIGTERM);
  EXPECT_EQ(status_of_last(db_, dir_), "interrupted");
  Outcome runs = sl("runs --db " + db_);
  EXPECT_NE(runs.out.find("interrupted"), std::string::npos) << runs.out;
}

TEST_F(Hardening, AKilledRunIsShownInterrupted) {
  std::string program = write("slow.hlo", slow_program());
  kill_while_running(program, db_, dir_, SIGKILL);
  EXPECT_EQ(status_of_last(db_, dir_), "interrupted");
}

}  // namespace
}  // namespace sl::cli_test
