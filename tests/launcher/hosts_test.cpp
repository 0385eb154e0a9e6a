// Ranks on other hosts: --host, --hostfile and --launch-agent. The agent here is a real script
// that records how braidrun called it and then runs the command through a shell on this
// machine, exactly as ssh would run it on the host; the ranks are real processes.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "braidrun_process.hpp"

namespace braid_launcher_test {
namespace {

// Writes an agent that appends "host<TAB>words..." to $AGENT_LOG/agent.<host>.<n> and runs the
// command as a remote shell would.
std::string write_agent(const TempDir &dir) {
  const std::string path = dir / "record-agent";
  std::ofstream out(path);
  out << "#!/bin/sh\n"
         "host=$1; shift\n"
         "log=\"$AGENT_LOG/agent.$host.$$\"\n"
         "printf '%s\\n' \"$@\" > \"$log\"\n"
         "exec /bin/sh -c \"exec $*\"\n";
  out.close();
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

std::vector<std::string> agent_calls(const TempDir &dir, const std::string &host) {
  std::vector<std::string> calls;
  for (const auto &entry : std::filesystem::directory_iterator(dir.path()))
    if (entry.path().filename().string().rfind("agent." + host + ".", 0) == 0)
      calls.push_back(read_file(entry.path().string()));
  return calls;
}

std::map<std::string, std::string> rank_env(const TempDir &dir, int rank) {
  std::map<std::string, std::string> env;
  for (const std::string &line : split_lines(read_file(dir / ("env." + std::to_string(rank))))) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

const std::string kDumpEnv = "env > \"$OUT_DIR/env.$BRAID_RANK\"";

TEST(Hosts, RanksFillTheSlotsInOrderThroughTheAgent) {
  TempDir dir;
  const std::string agent = write_agent(dir);
  const RunResult result =
      run_braidrun({"--host", "alpha:2,beta:1", "--launch-agent", agent, "sh", "-c", kDumpEnv},
                   {{"AGENT_LOG", dir.path().string()}, {"OUT_DIR", dir.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(agent_calls(dir, "alpha").size(), 2u);
  EXPECT_EQ(agent_calls(dir, "beta").size(), 1u);
  const std::vector<std::pair<std::string, std::string>> expected_local = {
      {"0", "2"}, {"1", "2"}, {"0", "1"}};
  std::string rendezvous;
  for (int rank = 0; rank < 3; ++rank) {
    const auto env = rank_env(dir, rank);
    EXPECT_EQ(env.at("BRAID_SIZE"), "3");
    EXPECT_EQ(env.at("BRAID_LOCAL_RANK"), expected_local[rank].first) << "rank " << rank;
    EXPECT_EQ(env.at("BRAID_LOCAL_SIZE"), expected_local[rank].second) << "rank " << rank;
    EXPECT_EQ(env.count("BRAID_BOOTSTRAP"), 0u) << "a job across hosts has no fixed address";
    // braidrun's rendezvous service, never on loopback when other hosts must reach it.
    ASSERT_EQ(env.count("BRAID_RENDEZVOUS"), 1u);
    EXPECT_EQ(env.at("BRAID_RENDEZVOUS").find("127.0.0.1"), std::string::npos);
    if (rank == 0) rendezvous = env.at("BRAID_RENDEZVOUS");
    EXPECT_EQ(env.at("BRAID_RENDEZVOUS"), rendezvous);
    EXPECT_EQ(env.at("BRAID_JOB_KEY").size(), 32u);
  }
}

TEST(Hosts, LocalRanksCountThisMachineOnceUnderEveryName) {
  // localhost and 127.0.0.1 are this machine: three ranks here, local ranks 0, 1, 2 of 3
  // (counted per name, two of them were local rank 0).
  TempDir dir;
  const RunResult result = run_braidrun({"--host", "localhost:1,127.0.0.1:2", "sh", "-c", kDumpEnv},
                                        {{"OUT_DIR", dir.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (int rank = 0; rank < 3; ++rank) {
    const auto env = rank_env(dir, rank);
    EXPECT_EQ(env.at("BRAID_LOCAL_RANK"), std::to_string(rank)) << "rank " << rank;
    EXPECT_EQ(env.at("BRAID_LOCAL_SIZE"), "3") << "rank " << rank;
  }
}

TEST(Hosts, AgentGetsHostThenEnvThenTheQuotedCommand) {
  TempDir dir;
  const std::string agent = write_agent(dir);
  const RunResult result = run_braidrun({"--host", "alpha", "--launch-agent", agent, "sh", "-c",
                                         "printf '<%s>' \"$@\" > \"$OUT_DIR/args\"", "zero",
                                         "two words", "it's", "=5", "%1", "a^b", "k=v"},
                                        {{"AGENT_LOG", dir.path().string()},
                                         {"OUT_DIR", dir.path().string()},
                                         {"UCX_TLS", "tcp,self"},
                                         {"BRAID_DEBUG", "warn"},
                                         {"UNRELATED_VARIABLE", "stays-home"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto calls = agent_calls(dir, "alpha");
  ASSERT_EQ(calls.size(), 1u);
  const std::vector<std::string> words = split_lines(calls[0]);
  ASSERT_GE(words.size(), 3u);
  EXPECT_EQ(words[0], "env");
  auto has = [&](const std::string &w) {
    return std::find(words.begin(), words.end(), w) != words.end();
  };
  EXPECT_TRUE(has("BRAID_RANK=0"));
  EXPECT_TRUE(has("BRAID_SIZE=1"));
  EXPECT_TRUE(has("UCX_TLS=tcp,self"));  // UCX_* and BRAID_* travel to the host
  EXPECT_TRUE(has("BRAID_DEBUG=warn"));
  EXPECT_FALSE(has("UNRELATED_VARIABLE=stays-home"));  // the rest comes from the host
  EXPECT_TRUE(has("'two words'"));
  EXPECT_TRUE(has("'it'\\''s'"));
  // zsh on the host would expand these ("=5": the path of a command 5) unless quoted.
  EXPECT_TRUE(has("'=5'"));
  EXPECT_TRUE(has("'%1'"));
  EXPECT_TRUE(has("'a^b'"));
  EXPECT_TRUE(has("k=v"));
  // The shell on the "host" undid the quoting: the program got its arguments intact.
  EXPECT_EQ(read_file(dir / "args"), "<two words><it's><=5><%1><a^b><k=v>");
}

TEST(Hosts, HostfileSlotsAndComments) {
  TempDir dir;
  const std::string agent = write_agent(dir);
  {
    std::ofstream hosts(dir / "hosts");
    hosts << "# cluster\n\nalpha slots=1\nbeta   slots=2  # two\n";
  }
  const RunResult result =
      run_braidrun({"--hostfile", dir / "hosts", "--launch-agent", agent, "sh", "-c", kDumpEnv},
                   {{"AGENT_LOG", dir.path().string()}, {"OUT_DIR", dir.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(agent_calls(dir, "alpha").size(), 1u);
  EXPECT_EQ(agent_calls(dir, "beta").size(), 2u);
  EXPECT_EQ(rank_env(dir, 2).at("BRAID_LOCAL_RANK"), "1");
}

TEST(Hosts, FewerRanksThanSlotsFillTheFirstHosts) {
  TempDir dir;
  const std::string agent = write_agent(dir);
  const RunResult result =
      run_braidrun({"-n", "2", "--host", "alpha:2,beta:2", "--launch-agent", agent, "true"},
                   {{"AGENT_LOG", dir.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(agent_calls(dir, "alpha").size(), 2u);
  EXPECT_EQ(agent_calls(dir, "beta").size(), 0u);
}

TEST(Hosts, ThisMachineIsStartedDirectly) {
  TempDir dir;
  const std::string agent = write_agent(dir);
  const RunResult result =
      run_braidrun({"--host", "localhost:2", "--launch-agent", agent, "sh", "-c", kDumpEnv},
                   {{"AGENT_LOG", dir.path().string()}, {"OUT_DIR", dir.path().string()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(agent_calls(dir, "localhost").empty());
  EXPECT_EQ(rank_env(dir, 1).at("BRAID_BOOTSTRAP").rfind("127.0.0.1:", 0), 0u);
}

TEST(Hosts, TheAgentsExitIsTheRanks) {
  TempDir dir;
  const std::string agent = write_agent(dir);
  const RunResult result = run_braidrun({"--host", "alpha:1,beta:1", "--launch-agent", agent, "sh",
                                         "-c", "if [ $BRAID_RANK = 1 ]; then exit 3; fi; sleep 30"},
                                        {{"AGENT_LOG", dir.path().string()}});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.err.find("rank 1 (pid "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(", beta via record-agent) exited with code 3"), std::string::npos)
      << result.err;
  EXPECT_LT(result.elapsed, std::chrono::seconds(10));  // rank 0 was stopped, not waited for
}

TEST(Hosts, SignalsReachRanksStartedThroughTheAgent) {
  using namespace std::chrono_literals;
  TempDir dir;
  const std::string agent = write_agent(dir);
  BraidrunProcess braidrun(
      {"--host", "alpha:1,beta:1", "--launch-agent", agent, "--tag-output", "sh", "-c",
       "trap 'echo TERM > \"$DIR/marker.$BRAID_RANK\"; exit 0' TERM; "
       "touch \"$DIR/ready.$BRAID_RANK\"; while :; do sleep 0.05; done"},
      {{"AGENT_LOG", dir.path().string()}, {"DIR", dir.path().string()}});
  ASSERT_TRUE(wait_for_files({dir / "ready.0", dir / "ready.1"}, 5s));
  ASSERT_EQ(kill(braidrun.pid(), SIGTERM), 0);
  const RunResult result = braidrun.wait();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(read_file(dir / "marker.0"), "TERM\n");
  EXPECT_EQ(read_file(dir / "marker.1"), "TERM\n");
}

TEST(Hosts, AMissingAgentIsReportedByName) {
  const RunResult result =
      run_braidrun({"--host", "alpha", "--launch-agent", "no-such-agent-xyz", "true"});
  EXPECT_EQ(result.exit_code, 127);
  EXPECT_NE(result.err.find("no-such-agent-xyz"), std::string::npos) << result.err;
}

TEST(Hosts, HelpDocumentsHostsTheAgentAndTheOtherLaunchers) {
  const RunResult result = run_braidrun({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  for (const char *documented :
       {"--host LIST", "--hostfile F", "slots=2", "--launch-agent CMD", "default: ssh",
        "CMD <host> env", "BRAID_RENDEZVOUS=", "BRAID_SOCKET_IFNAME", "^docker,lo", "=eth0",
        "container bridges", "mpirun", "srun --mpi=pmix", "h2 via ssh"})
    EXPECT_NE(result.out.find(documented), std::string::npos) << "help lacks " << documented;
}

TEST(Hosts, UsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string named;
    int exit_code;
  };
  TempDir dir;
  {
    std::ofstream bad(dir / "bad-hosts");
    bad << "alpha slots=2\nbeta cpus=4\n";
  }
  const std::vector<Case> cases = {
      {{"--host", "alpha:0", "true"}, "'alpha:0' needs slots from 1 to 4096", 2},
      {{"--host", "al pha", "true"}, "'al pha' is not a host name", 2},
      {{"--host", "a,", "true"}, "'' is not a host name", 2},
      {{"--host", "a", "--hostfile", dir / "bad-hosts", "true"}, "cannot be combined", 2},
      {{"--host", "a", "--launch-agent", " ", "true"}, "--launch-agent", 2},
      {{"-n", "3", "--host", "a:1,b:1", "true"}, "3 ranks do not fit the 2 slots", 1},
      {{"--hostfile", dir / "bad-hosts", "true"}, "bad-hosts:2: 'cpus=4' is not slots=N", 1},
      {{"--hostfile", dir / "missing", "true"}, "cannot read hostfile", 1},
  };
  for (const Case &c : cases) {
    const RunResult result = run_braidrun(c.args);
    EXPECT_EQ(result.exit_code, c.exit_code) << c.named << ": " << result.err;
    EXPECT_NE(result.err.find(c.named), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace braid_launcher_test
