// What ranks leave behind: processes a rank started that are still running in its process
// group when the rank itself has gone (a wrapper script that did not exec its program, a
// background job). braidrun ends them with the job, however the job ends, as srun does.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "braidrun_process.hpp"

namespace braid_launcher_test {
namespace {

using namespace std::chrono_literals;

// Each rank is a shell that records its pid, which is its group's id, then runs a program
// that ignores SIGTERM in a subshell and does not exec it, so the shell dies of the SIGTERM
// and leaves the program behind in its group.
const std::string kStubbornChild =
    "echo $$ > \"$DIR/pid.$BRAID_RANK\"; (trap '' TERM; exec sleep 60); :";

TEST(LeftoverProcesses, ProcessesThatOutliveTheirRankAreKilledWhenTheJobIsStopped) {
  TempDir dir;
  BraidrunProcess braidrun({"-n", "2", "sh", "-c", kStubbornChild}, {{"DIR", dir.path().string()}});
  const std::vector<std::string> pids = rank_files(dir, "pid.", 2);
  ASSERT_TRUE(wait_for_files(pids, 5s));
  std::this_thread::sleep_for(100ms);  // the sleeps have started
  ASSERT_EQ(kill(braidrun.pid(), SIGTERM), 0);
  const RunResult result = braidrun.wait();
  ASSERT_TRUE(result.exited);
  // The shells died of the SIGTERM at once; what they left ignored it and got SIGKILL later.
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_GE(result.elapsed, 2500ms);
  EXPECT_NE(result.err.find("sending SIGKILL"), std::string::npos) << result.err;
  // It waited for them asleep, not polling in a loop.
  EXPECT_LT(result.cpu, result.elapsed / 4);
  for (const std::string &pid : pids)
    EXPECT_TRUE(process_group_gone(read_pid(pid), 2s)) << "processes left by " << pid;
}

TEST(LeftoverProcesses, ProcessesThatOutliveAFailedRankAreKilled) {
  TempDir dir;
  const RunResult result = run_braidrun(
      {"-n", "2", "sh", "-c",
       "echo $$ > \"$DIR/pid.$BRAID_RANK\"; [ $BRAID_RANK = 1 ] && { sleep 0.3; exit 4; }; " +
           kStubbornChild},
      {{"DIR", dir.path().string()}});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 4) << result.err;
  EXPECT_LT(result.elapsed, 10s);
  for (const std::string &pid : rank_files(dir, "pid.", 2))
    EXPECT_TRUE(process_group_gone(read_pid(pid), 2s)) << "processes left by " << pid;
}

TEST(LeftoverProcesses, BackgroundJobsOfRanksThatSucceededAreEndedWithTheJob) {
  TempDir dir;
  const RunResult result =
      run_braidrun({"-n", "2", "sh", "-c", "echo $$ > \"$DIR/pid.$BRAID_RANK\"; sleep 60 & exit 0"},
                   {{"DIR", dir.path().string()}});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0) << result.err;  // the ranks succeeded
  EXPECT_LT(result.elapsed, 5s);
  EXPECT_EQ(result.err,
            "braidrun: every rank has exited, but processes they started are still running "
            "(ranks 0, 1); sending them SIGTERM\n");
  for (const std::string &pid : rank_files(dir, "pid.", 2))
    EXPECT_TRUE(process_group_gone(read_pid(pid), 2s)) << "processes left by " << pid;
}

TEST(LeftoverProcesses, ProcessesRanksStartedDieWithBraidrun) {
  // The ranks' parent-death signal reaches the shells only; braidrun's guard process ends
  // the rest of their groups.
  TempDir dir;
  BraidrunProcess braidrun(
      {"-n", "2", "sh", "-c", "echo $$ > \"$DIR/pid.$BRAID_RANK\"; sleep 60; :"},
      {{"DIR", dir.path().string()}});
  const std::vector<std::string> pids = rank_files(dir, "pid.", 2);
  ASSERT_TRUE(wait_for_files(pids, 5s));
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(kill(braidrun.pid(), SIGKILL), 0);
  const RunResult result = braidrun.wait();
  EXPECT_FALSE(result.exited);
  for (const std::string &pid : pids)
    EXPECT_TRUE(process_group_gone(read_pid(pid), 2s)) << "processes left by " << pid;
}

}  // namespace
}  // namespace braid_launcher_test
