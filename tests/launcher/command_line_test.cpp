// braidrun's command line: help, version, -n/-np, validation and usage errors (exit 2).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "braidrun_process.hpp"

namespace braid_launcher_test {
namespace {

// A usage error: exit 2, nothing on stdout, and stderr names the offending value and
// points at --help.
void expect_usage_error(const std::vector<std::string> &args, const std::string &named) {
  SCOPED_TRACE("braidrun args ending in '" + (args.empty() ? "" : args.back()) + "'");
  const RunResult result = run_braidrun(args);
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find(named), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("Usage: braidrun -n N"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("braidrun --help"), std::string::npos) << result.err;
}

TEST(CommandLine, HelpDocumentsEveryOptionAndVariable) {
  for (const char *flag : {"--help", "-h"}) {
    const RunResult result = run_braidrun({flag});
    ASSERT_TRUE(result.exited);
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.err, "");
    for (const char *documented : {"-n N",
                                   "-np N",
                                   "--transport T",
                                   "auto, ucx or verbs",
                                   "--timeout S",
                                   "--tag-output",
                                   "[1] hello",
                                   "--help",
                                   "--version",
                                   "--  ",
                                   "BRAID_RANK=",
                                   "BRAID_SIZE=",
                                   "BRAID_LOCAL_RANK=",
                                   "BRAID_LOCAL_SIZE=",
                                   "BRAID_BOOTSTRAP=127.0.0.1:PORT",
                                   "BRAID_JOB_KEY=",
                                   "BRAID_TRANSPORT=",
                                   "BRAID_TIMEOUT=",
                                   "SIGINT",
                                   "SIGTERM",
                                   "SIGKILL",
                                   "4096",
                                   "Exit status"}) {
      EXPECT_NE(result.out.find(documented), std::string::npos) << "help lacks " << documented;
    }
  }
}

TEST(CommandLine, HelpWinsOverLaterArguments) {
  const RunResult result = run_braidrun({"-n", "2", "--help", "no-such-program"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("Usage: braidrun"), std::string::npos);
}

TEST(CommandLine, VersionIsExact) {
  const RunResult result = run_braidrun({"--version"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, std::string("braidrun (braid) ") + BRAID_PROJECT_VERSION + "\n");
  EXPECT_EQ(result.err, "");
}

TEST(CommandLine, RejectsBadRankCountsNamingTheValue) {
  for (const char *bad :
       {"0", "4097", "abc", "2x", "+2", " 2", "-3", "99999999999999999999", "1.5"}) {
    expect_usage_error({"-n", bad, "true"}, std::string("'") + bad + "'");
    expect_usage_error({"-np", bad, "true"}, std::string("'") + bad + "'");
  }
  expect_usage_error({"-n", "", "true"}, "''");
}

TEST(CommandLine, AcceptsTheLargestRankCount) {
  // 4096 passes validation; launching then fails at rank 0 because the program does not exist,
  // which proves the value was accepted without starting 4096 processes.
  const RunResult result = run_braidrun({"-n", "4096", "braid-no-such-program"});
  EXPECT_EQ(result.exit_code, 127);
  EXPECT_EQ(result.err.find("Usage"), std::string::npos) << result.err;
}

TEST(CommandLine, RankCountIsRequiredAndNeedsAValue) {
  expect_usage_error({"true"}, "missing -n N");
  expect_usage_error({"-n"}, "'-n' requires a value");
  expect_usage_error({"-np"}, "'-np' requires a value");
}

TEST(CommandLine, ProgramIsRequired) {
  expect_usage_error({"-n", "2"}, "missing the program");
  expect_usage_error({"-n", "2", "--"}, "missing the program");
  expect_usage_error({"-n", "2", "--tag-output"}, "missing the program");
}

TEST(CommandLine, RejectsUnknownOptions) {
  expect_usage_error({"-x", "-n", "1", "true"}, "unknown option '-x'");
  expect_usage_error({"-n", "1", "--tag", "true"}, "unknown option '--tag'");
  expect_usage_error({"--n=2", "true"}, "unknown option '--n=2'");
  expect_usage_error({"-n", "1", "--tag-output=yes", "true"}, "'--tag-output' takes no value");
}

TEST(CommandLine, ValidatesTransport) {
  for (const char *bad : {"tcp", "UCX", "", "auto,ucx"}) {
    expect_usage_error({"-n", "1", "--transport", bad, "true"}, std::string("'") + bad + "'");
  }
  expect_usage_error({"-n", "1", "--transport"}, "'--transport' requires a value");
}

TEST(CommandLine, ValidatesTimeout) {
  for (const char *bad :
       {"0", "0.0", "-1", "abc", "1e3", "inf", "nan", "", ".5", "5.", "1.2.3", "0x10", " 1"}) {
    expect_usage_error({"-n", "1", "--timeout", bad, "true"}, std::string("'") + bad + "'");
  }
  expect_usage_error({"-n", "1", "--timeout"}, "'--timeout' requires a value");
}

TEST(CommandLine, NpIsASynonymOfN) {
  const RunResult result = run_braidrun({"-np", "3", "sh", "-c", "echo size=$BRAID_SIZE"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "size=3\nsize=3\nsize=3\n");
}

TEST(CommandLine, LastRankCountWins) {
  const RunResult result = run_braidrun({"-n", "5", "-np", "2", "sh", "-c", "echo x"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "x\nx\n");
}

TEST(CommandLine, ArgumentsAfterTheProgramBelongToIt) {
  const RunResult result = run_braidrun(
      {"-n", "1", "sh", "-c", "printf '%s|' \"$@\"", "sh", "-n", "5", "--tag-output", "--"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "-n|5|--tag-output|--|");
}

TEST(CommandLine, DoubleDashEndsOptions) {
  const RunResult result = run_braidrun({"-n", "1", "--", "sh", "-c", "echo ok"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "ok\n");
}

TEST(CommandLine, LongOptionsAcceptEqualsForm) {
  const RunResult result = run_braidrun({"-n", "1", "--transport=verbs", "--timeout=7", "sh", "-c",
                                         "echo $BRAID_TRANSPORT $BRAID_TIMEOUT"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "verbs 7\n");
}

}  // namespace
}  // namespace braid_launcher_test
