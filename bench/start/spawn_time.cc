// Start-up cost of one command: runs it N times as a child (posix_spawn),
// timing spawn to exit with a monotonic clock, and reads the child's peak
// RSS from wait4's rusage. Prints the median wall time, the median and the
// largest peak RSS. No shell or /usr/bin/time in between, so their own start
// is not counted. Built and run by start_bench.sh.
//   spawn_time N CMD [ARGS...]
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <vector>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: spawn_time N CMD [ARGS...]\n");
    return 2;
  }
  const int n = std::max(1, std::atoi(argv[1]));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<double> ms, rss_mb;
  int failures = 0;
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[2], &actions, nullptr, argv + 2, environ) != 0) {
      std::perror(argv[2]);
      return 1;
    }
    int status = 0;
    rusage usage{};
    if (wait4(pid, &status, 0, &usage) != pid) {
      std::perror("wait4");
      return 1;
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    rss_mb.push_back(static_cast<double>(usage.ru_maxrss) / 1024.0);  // ru_maxrss is in KiB
  }
  posix_spawn_file_actions_destroy(&actions);
  std::sort(ms.begin(), ms.end());
  std::sort(rss_mb.begin(), rss_mb.end());
  std::printf("%.1f ms (min %.1f)  %.1f MB (max %.1f)%s\n", ms[ms.size() / 2], ms.front(), rss_mb[rss_mb.size() / 2],
              rss_mb.back(), failures > 0 ? "  [command failed]" : "");
  return failures > 0 ? 1 : 0;
}
