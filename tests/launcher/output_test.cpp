// Rank output: inherited streams by default, "[rank] "-prefixed whole lines with --tag-output.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "braidrun_process.hpp"

namespace braid_launcher_test {
namespace {

std::vector<std::string> sorted_lines(const std::string &text) {
  std::vector<std::string> lines = split_lines(text);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Lines of one rank in the order they appeared.
std::vector<std::string> lines_of_rank(const std::string &text, int rank) {
  std::string prefix = "[";  // appended, not +: GCC 12 -O3 warns falsely (PR 105329)
  prefix += std::to_string(rank);
  prefix += "] ";
  std::vector<std::string> lines;
  for (const std::string &line : split_lines(text)) {
    if (line.starts_with(prefix)) lines.push_back(line.substr(prefix.size()));
  }
  return lines;
}

TEST(Output, WithoutTagOutputRanksWriteToBraidrunsOwnStreams) {
  // /proc/$$/fd/N names the file each rank writes to: it must be braidrun's capture file
  // itself, not a pipe through braidrun.
  const RunResult result = run_braidrun({"-n", "2", "sh", "-c",
                                         "echo \"out$BRAID_RANK $(readlink /proc/$$/fd/1)\"; "
                                         "echo \"err$BRAID_RANK $(readlink /proc/$$/fd/2)\" >&2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> out = sorted_lines(result.out);
  const std::vector<std::string> err = sorted_lines(result.err);
  ASSERT_EQ(out.size(), 2u) << result.out;
  ASSERT_EQ(err.size(), 2u) << result.err;
  for (int rank = 0; rank < 2; ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    EXPECT_TRUE(out[r].starts_with("out" + std::to_string(rank) + " /")) << out[r];
    EXPECT_TRUE(out[r].ends_with("/stdout")) << out[r];
    EXPECT_TRUE(err[r].starts_with("err" + std::to_string(rank) + " /")) << err[r];
    EXPECT_TRUE(err[r].ends_with("/stderr")) << err[r];
  }
}

TEST(Output, TagOutputPrefixesStdoutAndStderrSeparately) {
  const RunResult result =
      run_braidrun({"-n", "3", "--tag-output", "sh", "-c",
                    "echo a$BRAID_RANK; echo e$BRAID_RANK >&2; echo b$BRAID_RANK"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(sorted_lines(result.out),
            (std::vector<std::string>{"[0] a0", "[0] b0", "[1] a1", "[1] b1", "[2] a2", "[2] b2"}));
  EXPECT_EQ(sorted_lines(result.err), (std::vector<std::string>{"[0] e0", "[1] e1", "[2] e2"}));
  for (int rank = 0; rank < 3; ++rank) {
    const std::string r = std::to_string(rank);
    EXPECT_EQ(lines_of_rank(result.out, rank), (std::vector<std::string>{"a" + r, "b" + r}));
  }
}

TEST(Output, TagOutputFlushesAPartialLastLineAtEndOfStream) {
  const RunResult result = run_braidrun(
      {"-n", "1", "--tag-output", "sh", "-c", "printf 'first\\n\\nlast'; printf 'oops' >&2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "[0] first\n[0] \n[0] last\n");
  EXPECT_EQ(result.err, "[0] oops\n");
}

TEST(Output, TagOutputReassemblesLinesWrittenInPieces) {
  // Every line is written by three separate printf calls with pauses in between, while four
  // ranks write at once: each output line must still be exactly one rank's complete line.
  const RunResult result = run_braidrun(
      {"-n", "4", "--tag-output", "sh", "-c",
       "i=0; while [ $i -lt 50 ]; do printf 'r%s-' $BRAID_RANK; "
       "[ $((i % 10)) = 0 ] && sleep 0.01; printf 'line%s' $i; printf '\\n'; i=$((i+1)); done"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::regex line_format(R"(\[([0-3])\] r\1-line([0-9]+))");
  std::map<int, int> next_line;
  const std::vector<std::string> lines = split_lines(result.out);
  EXPECT_EQ(lines.size(), 200u);
  for (const std::string &line : lines) {
    std::smatch match;
    ASSERT_TRUE(std::regex_match(line, match, line_format)) << "mangled line: " << line;
    const int rank = std::stoi(match[1]);
    EXPECT_EQ(std::stoi(match[2]), next_line[rank]++) << line;
  }
}

TEST(Output, TagOutputForwardsTheLastWordsOfAFailingRankBeforeTheVerdict) {
  const RunResult result = run_braidrun({"-n", "1", "--tag-output", "sh", "-c",
                                         "echo 'bad input' >&2; printf 'no newline' >&2; "
                                         "exit 4"});
  EXPECT_EQ(result.exit_code, 4);
  const std::vector<std::string> lines = split_lines(result.err);
  ASSERT_EQ(lines.size(), 3u) << result.err;
  EXPECT_EQ(lines[0], "[0] bad input");
  EXPECT_EQ(lines[1], "[0] no newline");
  EXPECT_TRUE(lines[2].starts_with("braidrun: rank 0 (pid ")) << lines[2];
}

TEST(Output, TagOutputStopsRanksWhoseOutputNobodyReads) {
  // braidrun's stdout is a pipe that head closes after two lines while `yes` writes forever.
  // As in a shell pipeline, the rank must then die of SIGPIPE and the job end with 141.
  using namespace std::chrono_literals;
  TempDir dir;
  const std::string status_file = dir / "status";
  const pid_t shell = fork();
  ASSERT_GE(shell, 0);
  if (shell == 0) {
    execl("/bin/sh", "sh", "-c",
          "{ \"$0\" -n 2 --tag-output yes; echo $? > \"$1\"; } | head -n 2 > /dev/null",
          BRAIDRUN_PATH, status_file.c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  int status = 0;
  while (waitpid(shell, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(shell, SIGKILL);
      waitpid(shell, &status, 0);
      FAIL() << "braidrun kept running after its stdout was closed";
    }
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(read_file(status_file), "141\n");
}

TEST(Output, TagOutputSplitsOverlongLines) {
  // 100000 bytes without a newline: forwarded as a 65536-byte piece and the rest.
  const RunResult result = run_braidrun(
      {"-n", "1", "--tag-output", "sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines = split_lines(result.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "[0] " + std::string(65536, 'x'));
  EXPECT_EQ(lines[1], "[0] " + std::string(100000 - 65536, 'x'));
}

TEST(Output, StandardInputGoesToRankZeroOnly) {
  // As mpirun's: shared by every rank, the lines were split between them at random.
  TempDir dir;
  {
    std::ofstream input(dir / "input");
    for (int i = 0; i < 1000; ++i) input << i << '\n';
  }
  BraidrunProcess braidrun({"-n", "3", "--tag-output", "sh", "-c", "wc -l"}, {}, dir / "input");
  const RunResult result = braidrun.wait();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(lines_of_rank(result.out, 0), std::vector<std::string>{"1000"});
  EXPECT_EQ(lines_of_rank(result.out, 1), std::vector<std::string>{"0"});
  EXPECT_EQ(lines_of_rank(result.out, 2), std::vector<std::string>{"0"});
}

TEST(Output, TagOutputKeepsALineOfExactlyTheLimitWhole) {
  // 65536 bytes, then the newline (in a later read when the pipe hands over 64 KiB at a time).
  const RunResult result = run_braidrun({"-n", "1", "--tag-output", "sh", "-c",
                                         "head -c 65536 /dev/zero | tr '\\0' x; echo; echo next"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines = split_lines(result.out);
  ASSERT_EQ(lines.size(), 2u) << result.out.substr(0, 200);
  EXPECT_EQ(lines[0], "[0] " + std::string(65536, 'x'));
  EXPECT_EQ(lines[1], "[0] next");
}

}  // namespace
}  // namespace braid_launcher_test
