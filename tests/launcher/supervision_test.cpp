// Supervision: exit status, failure reports, tearing a job down, forwarded signals, parent
// death, and programs that cannot be started.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "braidrun_process.hpp"

namespace braid_launcher_test {
namespace {

using namespace std::chrono_literals;

// Lines braidrun reports as a job's first failure ("braidrun: rank R (pid P) ...").
std::vector<std::string> failure_reports(const std::string &err) {
  std::vector<std::string> reports;
  for (const std::string &line : split_lines(err)) {
    if (line.starts_with("braidrun: rank ")) reports.push_back(line);
  }
  return reports;
}

TEST(Supervision, SucceedsWhenEveryRankExitsZero) {
  const RunResult result = run_braidrun({"-n", "4", "sh", "-c", "sleep 0.$BRAID_RANK"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.err, "");
}

TEST(Supervision, PropagatesTheExitCodeAndNamesRankAndPid) {
  TempDir dir;
  const RunResult result = run_braidrun(
      {"-n", "3", "sh", "-c",
       "echo $$ > \"$DIR/pid.$BRAID_RANK\"; [ $BRAID_RANK = 1 ] && exit 3; exec sleep 60"},
      {{"DIR", dir.path().string()}});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_LT(result.elapsed, 10s);
  const std::vector<std::string> reports = failure_reports(result.err);
  ASSERT_EQ(reports.size(), 1u) << result.err;
  EXPECT_EQ(reports[0], "braidrun: rank 1 (pid " + std::to_string(read_pid(dir / "pid.1")) +
                            ") exited with code 3");
  // The sleeping ranks were stopped by SIGTERM and are listed on the follow-up line.
  EXPECT_NE(result.err.find("also ended abnormally during shutdown: rank "), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("(signal 15)"), std::string::npos) << result.err;
}

TEST(Supervision, RankKilledBySignalStopsTheJobQuickly) {
  // Rank 1 SIGKILLs itself; the others sleep in a child of their shell, so stopping them
  // takes signalling the rank's whole process group, not just the shell.
  TempDir dir;
  const RunResult result = run_braidrun(
      {"-n", "4", "sh", "-c",
       "echo $$ > \"$DIR/pid.$BRAID_RANK\"; "
       "if [ $BRAID_RANK = 1 ]; then sleep 0.2; kill -9 $$; fi; sleep 60; echo survived"},
      {{"DIR", dir.path().string()}});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 137);
  EXPECT_LT(result.elapsed, 10s);
  EXPECT_EQ(result.out, "");
  const std::vector<std::string> reports = failure_reports(result.err);
  ASSERT_EQ(reports.size(), 1u) << result.err;
  EXPECT_EQ(reports[0], "braidrun: rank 1 (pid " + std::to_string(read_pid(dir / "pid.1")) +
                            ") killed by signal 9 (Killed)");
  for (const std::string &pid_file : rank_files(dir, "pid.", 4)) {
    EXPECT_TRUE(process_group_gone(read_pid(pid_file), 2s)) << "leftover processes of " << pid_file;
  }
}

TEST(Supervision, RanksIgnoringSigtermAreKilledAfterTheGracePeriod) {
  const RunResult result =
      run_braidrun({"-n", "2", "sh", "-c",
                    "trap '' TERM; [ $BRAID_RANK = 0 ] && { sleep 0.2; exit 5; }; sleep 60"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 5);
  EXPECT_GE(result.elapsed, 2500ms);
  EXPECT_LT(result.elapsed, 15s);  // a hang guard, with room for a loaded machine (ASan in CI)
  EXPECT_NE(result.err.find("braidrun: rank 0 (pid "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("sending SIGKILL"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("rank 1 (signal 9)"), std::string::npos) << result.err;
}

// `signal` sent to braidrun; the ranks trap `name` (what they should get), note it and exit 0;
// braidrun says `said`.
void expect_signal_forwarded(int signal, const std::string &name, const std::string &said = "") {
  TempDir dir;
  BraidrunProcess braidrun(
      {"-n", "3", "sh", "-c",
       "trap 'echo " + name + " > \"$DIR/marker.$BRAID_RANK\"; exit 0' " + name +
           "; touch \"$DIR/ready.$BRAID_RANK\"; while :; do sleep 0.05; done"},
      {{"DIR", dir.path().string()}});
  ASSERT_TRUE(wait_for_files(rank_files(dir, "ready.", 3), 5s));
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(braidrun.pid(), signal), 0);
  const RunResult result = braidrun.wait();
  // The ranks exit on the signal itself (their loop never ends): well before braidrun's 5 s
  // grace would SIGKILL them, with room for a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - sent, 4500ms);
  ASSERT_TRUE(result.exited);
  // Every rank handled the signal and exited 0, so the job succeeded.
  EXPECT_EQ(result.exit_code, 0) << result.err;
  for (const std::string &marker : rank_files(dir, "marker.", 3)) {
    EXPECT_EQ(read_file(marker), name + "\n") << marker;
  }
  EXPECT_NE(
      result.err.find(said.empty() ? "received SIG" + name + ", forwarding it to 3 ranks" : said),
      std::string::npos)
      << result.err;
  EXPECT_TRUE(failure_reports(result.err).empty()) << result.err;
}

TEST(Supervision, ForwardsSigtermToEveryRank) {
  expect_signal_forwarded(SIGTERM, "TERM");
}

TEST(Supervision, ForwardsSigintToEveryRank) {
  expect_signal_forwarded(SIGINT, "INT");
}

// A dropped session: the ranks are asked to end, as by SIGTERM (by default braidrun died at
// once and its ranks' handlers never ran).
TEST(Supervision, SighupEndsTheRanksWithSigterm) {
  expect_signal_forwarded(SIGHUP, "TERM", "received SIGHUP, sending SIGTERM to 3 ranks");
}

TEST(Supervision, ForwardsSigquitToEveryRank) {
  expect_signal_forwarded(SIGQUIT, "QUIT");
}

// What a batch system sends ahead of a time limit (Slurm's --signal=USR1@...): passed on, and
// the job goes on until the ranks end it (here they exit at once).
TEST(Supervision, PassesSigusr1AndSigusr2OnToEveryRank) {
  expect_signal_forwarded(SIGUSR1, "USR1", "received SIGUSR1, passing it on to 3 ranks");
  expect_signal_forwarded(SIGUSR2, "USR2", "received SIGUSR2, passing it on to 3 ranks");
}

TEST(Supervision, ForwardedSignalIsFollowedBySigkillAfterFiveSeconds) {
  TempDir dir;
  BraidrunProcess braidrun(
      {"-n", "2", "sh", "-c", "trap '' TERM; touch \"$DIR/ready.$BRAID_RANK\"; sleep 60"},
      {{"DIR", dir.path().string()}});
  ASSERT_TRUE(wait_for_files(rank_files(dir, "ready.", 2), 5s));
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(braidrun.pid(), SIGTERM), 0);
  const RunResult result = braidrun.wait();
  const auto waited = std::chrono::steady_clock::now() - sent;
  EXPECT_GE(waited, 4500ms);
  EXPECT_LT(waited, 9s);  // braidrun's timer, with room for a loaded machine
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 137);
  EXPECT_NE(result.err.find("killed by signal 9 (Killed)"), std::string::npos) << result.err;
}

TEST(Supervision, RanksDieWithBraidrun) {
  TempDir dir;
  BraidrunProcess braidrun(
      {"-n", "2", "sh", "-c", "echo $$ > \"$DIR/pid.$BRAID_RANK\"; exec sleep 60"},
      {{"DIR", dir.path().string()}});
  const std::vector<std::string> pid_files = rank_files(dir, "pid.", 2);
  ASSERT_TRUE(wait_for_files(pid_files, 5s));
  std::this_thread::sleep_for(100ms);  // let the pid files be written completely
  ASSERT_EQ(kill(braidrun.pid(), SIGKILL), 0);
  const RunResult result = braidrun.wait();
  EXPECT_FALSE(result.exited);
  for (const std::string &pid_file : pid_files) {
    EXPECT_TRUE(process_group_gone(read_pid(pid_file), 2s)) << "rank outlived braidrun";
  }
}

TEST(Supervision, NonexistentProgramIsAClearError) {
  const RunResult result = run_braidrun({"-n", "3", "braid-no-such-program", "arg"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 127);
  EXPECT_EQ(result.err,
            "braidrun: cannot execute 'braid-no-such-program': No such file or directory\n");
}

TEST(Supervision, NonExecutableProgramIsAClearError) {
  TempDir dir;
  const std::string program = dir / "not-executable";
  { std::ofstream(program) << "#!/bin/sh\n"; }
  const RunResult result = run_braidrun({"-n", "2", program});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 126);
  EXPECT_EQ(result.err, "braidrun: cannot execute '" + program + "': Permission denied\n");
}

}  // namespace
}  // namespace braid_launcher_test

namespace braid_launcher_test {
namespace {

// The state letter of /proc/PID/stat ('R', 'S', 'T' stopped, 'Z', ...); 0 once it is gone.
char process_state(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto end_of_comm = stat.rfind(')');
  return end_of_comm == std::string::npos || end_of_comm + 2 >= stat.size() ? 0
                                                                            : stat[end_of_comm + 2];
}

bool reaches_state(pid_t pid, bool stopped, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while ((process_state(pid) == 'T') != stopped) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

TEST(Supervision, CtrlZStopsTheRanksAndContinuingBraidrunContinuesThem) {
  // The terminal's SIGTSTP reaches braidrun alone (the foreground job): the ranks have
  // sessions of their own.
  TempDir dir;
  BraidrunProcess braidrun(
      {"-n", "2", "sh", "-c", "echo $$ > \"$DIR/pid.$BRAID_RANK\"; exec sleep 60"},
      {{"DIR", dir.path().string()}}, kTerminal);
  const std::vector<std::string> pid_files = rank_files(dir, "pid.", 2);
  ASSERT_TRUE(wait_for_files(pid_files, 5s));
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(kill(braidrun.pid(), SIGTSTP), 0);
  EXPECT_TRUE(reaches_state(braidrun.pid(), true, 5s)) << "braidrun stopped";
  for (const std::string &f : pid_files) EXPECT_TRUE(reaches_state(read_pid(f), true, 5s)) << f;
  ASSERT_EQ(kill(braidrun.pid(), SIGCONT), 0);  // what fg and bg send
  EXPECT_TRUE(reaches_state(braidrun.pid(), false, 5s)) << "braidrun continued";
  for (const std::string &f : pid_files) EXPECT_TRUE(reaches_state(read_pid(f), false, 5s)) << f;
  ASSERT_EQ(kill(braidrun.pid(), SIGTERM), 0);
  const RunResult result = braidrun.wait();
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 143) << result.err;
}

TEST(Supervision, SigtstpOutsideJobControlIsIgnored) {
  // Not the foreground job of a terminal (a batch job, nohup): the kernel would drop SIGTSTP
  // for a process group nobody can continue, and braidrun does not stop the job either.
  TempDir dir;
  BraidrunProcess braidrun({"-n", "1", "sh", "-c", "echo $$ > \"$DIR/pid.0\"; exec sleep 60"},
                           {{"DIR", dir.path().string()}});
  ASSERT_TRUE(wait_for_files({dir / "pid.0"}, 5s));
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(kill(braidrun.pid(), SIGTSTP), 0);
  std::this_thread::sleep_for(300ms);
  EXPECT_NE(process_state(braidrun.pid()), 'T');
  EXPECT_NE(process_state(read_pid(dir / "pid.0")), 'T');
  ASSERT_EQ(kill(braidrun.pid(), SIGTERM), 0);
  const RunResult result = braidrun.wait();
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 143) << result.err;
}

TEST(Supervision, ARankKilledBySignalIsTheFailureAmongRanksThatEndedTogether) {
  // Rank 3 crashes; the others notice and exit 1. If braidrun sees all of them at once (it
  // ran late: here it is held stopped), waitpid hands it rank 0 first; the crash is the cause.
  TempDir dir;
  BraidrunProcess braidrun(
      {"-n", "4", "sh", "-c",
       "echo $$ > \"$DIR/pid.$BRAID_RANK\"; while [ ! -e \"$DIR/go\" ]; do sleep 0.01; done; "
       "[ $BRAID_RANK = 3 ] && kill -SEGV $$; exit 1"},
      {{"DIR", dir.path().string()}});
  const std::vector<std::string> pid_files = rank_files(dir, "pid.", 4);
  ASSERT_TRUE(wait_for_files(pid_files, 5s));
  ASSERT_EQ(kill(braidrun.pid(), SIGSTOP), 0);
  ASSERT_TRUE(reaches_state(braidrun.pid(), true, 5s));
  { std::ofstream(dir / "go") << ""; }
  for (const std::string &f : pid_files) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (process_state(read_pid(f)) != 'Z' && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(10ms);
    ASSERT_EQ(process_state(read_pid(f)), 'Z') << f;
  }
  ASSERT_EQ(kill(braidrun.pid(), SIGCONT), 0);
  const RunResult result = braidrun.wait();
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 139) << result.err;
  EXPECT_EQ(failure_reports(result.err).front(), "braidrun: rank 3 (pid " +
                                                     std::to_string(read_pid(pid_files[3])) +
                                                     ") killed by signal 11 (Segmentation fault)")
      << result.err;
}

}  // namespace
}  // namespace braid_launcher_test
