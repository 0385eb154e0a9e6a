// Where ranks run: the CPUs braidrun inherited bound the ones its ranks get, and each rank has a
// session of its own (no controlling terminal), so nothing it does with a terminal can stop it.
#include <sched.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "braidrun_process.hpp"

namespace braid_launcher_test {
namespace {

// Runs braidrun with this thread's affinity narrowed to one CPU (fork keeps it), then restores.
class OneCpu {
 public:
  OneCpu() {
    CPU_ZERO(&saved_);
    if (sched_getaffinity(0, sizeof saved_, &saved_) != 0 || CPU_COUNT(&saved_) < 2) return;
    for (int c = CPU_SETSIZE - 1; c >= 0; --c)
      if (CPU_ISSET(c, &saved_)) {
        cpu_ = c;
        break;
      }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu_, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) cpu_ = -1;
  }
  ~OneCpu() {
    if (cpu_ >= 0) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  int cpu() const { return cpu_; }  // -1: this machine lets us use fewer than two CPUs

 private:
  cpu_set_t saved_;
  int cpu_ = -1;
};

const std::vector<std::string> kPrintAffinity = {"sh", "-c",
                                                 "grep Cpus_allowed_list /proc/self/status"};

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string> &tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

TEST(Placement, RanksStayOnTheCpusBraidrunWasGiven) {
  // As under taskset -c N or numactl --physcpubind: the default plan must not bind ranks to
  // cores 0.. that braidrun itself may not use.
  RunResult result;
  int cpu;
  {
    OneCpu narrowed;
    cpu = narrowed.cpu();
    if (cpu < 0) GTEST_SKIP() << "needs two CPUs";
    result = run_braidrun(with({"-n", "2", "--report-bindings"}, kPrintAffinity));
  }
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string line = "Cpus_allowed_list:\t" + std::to_string(cpu);
  EXPECT_EQ(result.out, line + "\n" + line + "\n");
  // One CPU for two ranks: not bound (they share it), and the report says why.
  EXPECT_NE(result.err.find("(default: 1 core < 2 local ranks)"), std::string::npos) << result.err;
}

TEST(Placement, ExplicitCoreBindingUsesOnlyTheInheritedCpus) {
  RunResult result;
  int cpu;
  {
    OneCpu narrowed;
    cpu = narrowed.cpu();
    if (cpu < 0) GTEST_SKIP() << "needs two CPUs";
    result = run_braidrun(with({"-n", "1", "--bind-to", "core"}, kPrintAffinity));
  }
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
}

TEST(Placement, EachRankLeadsASessionWithoutAControllingTerminal) {
  // A rank in braidrun's session but a background group would be stopped (SIGTTIN) for ever
  // the moment it read the terminal, pdb or a password prompt say; in a session of its own it
  // cannot be, and opening /dev/tty fails at once.
  TempDir dir;
  // /proc/PID/stat fields 1, 5, 6, 7: pid, process group, session, controlling tty (0: none).
  const RunResult result =
      run_braidrun({"-n", "2", "sh", "-c",
                    "cut -d' ' -f1,5,6,7 /proc/$$/stat > \"$DIR/ids.$BRAID_RANK\"; "
                    "if (: </dev/tty) 2>/dev/null; then echo tty-opened; fi"},
                   {{"DIR", dir.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "");
  for (int rank = 0; rank < 2; ++rank) {
    long pid = 0, pgid = 0, sid = 0, tty = -1;
    const std::string ids = read_file(dir / ("ids." + std::to_string(rank)));
    ASSERT_EQ(std::sscanf(ids.c_str(), "%ld %ld %ld %ld", &pid, &pgid, &sid, &tty), 4) << ids;
    EXPECT_EQ(sid, pid) << "rank " << rank << " leads its own session";
    EXPECT_EQ(pgid, pid) << "rank " << rank << " leads its own process group";
    EXPECT_EQ(tty, 0) << "rank " << rank << " has no controlling terminal";
  }
}

TEST(Placement, ATerminalIsNotRankZerosInput) {
  // With the terminal as braidrun's input rank 0 reads end of input: in a session of its own it
  // would read the terminal behind the shell's back (braidrun in the background), and in
  // braidrun's it was stopped for ever by SIGTTIN.
  const RunResult result =
      BraidrunProcess({"-n", "1", "sh", "-c", "if read x; then echo got:$x; else echo eof; fi"}, {},
                      kTerminal)
          .wait(std::chrono::seconds(10));
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "eof\n");
}

}  // namespace
}  // namespace braid_launcher_test
