// The environment contract: what every rank finds in its environment.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "braidrun_process.hpp"

namespace braid_launcher_test {
namespace {

using Environment = std::map<std::string, std::string>;

Environment parse_env(const std::string &text) {
  Environment env;
  for (const std::string &line : split_lines(text)) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

// Runs `env` in every rank, each writing to its own file, and returns rank -> environment.
// BRAID_TRANSPORT/BRAID_TIMEOUT are removed from braidrun's own environment so that only
// braidrun's options can put them there.
std::vector<Environment> rank_environments(const TempDir &dir, int ranks,
                                           const std::vector<std::string> &options = {},
                                           EnvChanges extra_env = {}) {
  std::vector<std::string> args{"-n", std::to_string(ranks)};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"sh", "-c", "env > \"$OUT_DIR/env.$BRAID_RANK\""});
  extra_env["OUT_DIR"] = dir.path().string();
  extra_env.try_emplace("BRAID_TRANSPORT", "");
  extra_env.try_emplace("BRAID_TIMEOUT", "");
  const RunResult result = run_braidrun(args, extra_env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<Environment> envs;
  for (int rank = 0; rank < ranks; ++rank) {
    envs.push_back(parse_env(read_file(dir / ("env." + std::to_string(rank)))));
  }
  return envs;
}

TEST(Environment, EveryRankGetsTheContractVariables) {
  TempDir dir;
  constexpr int kRanks = 4;
  const std::vector<Environment> envs = rank_environments(dir, kRanks);
  ASSERT_EQ(envs.size(), static_cast<std::size_t>(kRanks));

  const std::string bootstrap = envs[0].at("BRAID_BOOTSTRAP");
  const std::string key = envs[0].at("BRAID_JOB_KEY");
  std::smatch match;
  ASSERT_TRUE(std::regex_match(bootstrap, match, std::regex(R"(127\.0\.0\.1:([0-9]{1,5}))")))
      << bootstrap;
  const int port = std::stoi(match[1]);
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
  EXPECT_TRUE(std::regex_match(key, std::regex("[0-9a-f]{32}"))) << key;

  std::set<std::string> ranks_seen;
  for (int rank = 0; rank < kRanks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const Environment &env = envs[static_cast<std::size_t>(rank)];
    EXPECT_EQ(env.at("BRAID_RANK"), std::to_string(rank));
    EXPECT_EQ(env.at("BRAID_SIZE"), "4");
    EXPECT_EQ(env.at("BRAID_LOCAL_RANK"), std::to_string(rank));
    EXPECT_EQ(env.at("BRAID_LOCAL_SIZE"), "4");
    EXPECT_EQ(env.at("BRAID_BOOTSTRAP"), bootstrap);
    EXPECT_EQ(env.at("BRAID_JOB_KEY"), key);
    EXPECT_EQ(env.count("BRAID_TRANSPORT"), 0u);
    EXPECT_EQ(env.count("BRAID_TIMEOUT"), 0u);
    // braidrun's own environment is passed through.
    EXPECT_EQ(env.at("OUT_DIR"), dir.path().string());
    EXPECT_EQ(env.at("PATH"), std::getenv("PATH"));
    ranks_seen.insert(env.at("BRAID_RANK"));
  }
  EXPECT_EQ(ranks_seen, (std::set<std::string>{"0", "1", "2", "3"}));
}

TEST(Environment, BootstrapPortIsFreeForRankZero) {
  TempDir dir;
  const std::vector<Environment> envs = rank_environments(dir, 1);
  const std::string bootstrap = envs.at(0).at("BRAID_BOOTSTRAP");
  const int port = std::stoi(bootstrap.substr(bootstrap.find(':') + 1));
  // What rank 0 will do: listen on that port. braidrun must not still be holding it.
  const int sock = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(bind(sock, reinterpret_cast<const sockaddr *>(&address), sizeof address), 0)
      << "port " << port;
  EXPECT_EQ(listen(sock, 1), 0);
  close(sock);
}

TEST(Environment, JobKeyDiffersBetweenJobs) {
  TempDir first_dir, second_dir;
  const auto first = rank_environments(first_dir, 1);
  const auto second = rank_environments(second_dir, 1);
  EXPECT_NE(first.at(0).at("BRAID_JOB_KEY"), second.at(0).at("BRAID_JOB_KEY"));
}

TEST(Environment, TransportAndTimeoutArePropagatedToEveryRank) {
  for (const char *transport : {"auto", "ucx", "verbs"}) {
    TempDir dir;
    const auto envs = rank_environments(dir, 2, {"--transport", transport, "--timeout", "2.5"});
    for (const Environment &env : envs) {
      EXPECT_EQ(env.at("BRAID_TRANSPORT"), transport);
      EXPECT_EQ(env.at("BRAID_TIMEOUT"), "2.5");
    }
  }
  TempDir dir;
  const auto envs = rank_environments(dir, 1, {"--timeout", "30"});
  EXPECT_EQ(envs.at(0).at("BRAID_TIMEOUT"), "30");
  EXPECT_EQ(envs.at(0).count("BRAID_TRANSPORT"), 0u);
}

TEST(Environment, InheritedBraidVariablesAreReplacedNotDuplicated) {
  TempDir dir;
  const auto envs =
      rank_environments(dir, 2, {"--transport", "ucx"},
                        {{"BRAID_RANK", "99"}, {"BRAID_SIZE", "99"}, {"BRAID_TRANSPORT", "verbs"}});
  for (int rank = 0; rank < 2; ++rank) {
    const std::string text = read_file(dir / ("env." + std::to_string(rank)));
    EXPECT_EQ(envs.at(static_cast<std::size_t>(rank)).at("BRAID_RANK"), std::to_string(rank));
    EXPECT_EQ(envs.at(static_cast<std::size_t>(rank)).at("BRAID_SIZE"), "2");
    EXPECT_EQ(envs.at(static_cast<std::size_t>(rank)).at("BRAID_TRANSPORT"), "ucx");
    // Whole lines: the job key is random hex, and "=99" began one (BRAID_JOB_KEY=994e...).
    EXPECT_EQ(("\n" + text).find("\nBRAID_RANK=99\n"), std::string::npos) << text;
    EXPECT_EQ(("\n" + text).find("\nBRAID_SIZE=99\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("BRAID_TRANSPORT=verbs"), std::string::npos) << text;
  }
}

TEST(Environment, InheritedTransportPassesThroughWithoutTheOption) {
  TempDir dir;
  const auto envs = rank_environments(dir, 1, {}, {{"BRAID_TRANSPORT", "verbs"}});
  EXPECT_EQ(envs.at(0).at("BRAID_TRANSPORT"), "verbs");
}

TEST(Environment, ProgramIsLookedUpInPath) {
  TempDir dir;
  const std::string script = dir / "braid-test-rank-script";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\necho \"script rank $BRAID_RANK of $BRAID_SIZE: $*\"\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  const RunResult result =
      run_braidrun({"-n", "2", "braid-test-rank-script", "a", "b"},
                   {{"PATH", dir.path().string() + ":" + std::getenv("PATH")}});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> lines = split_lines(result.out);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines,
            (std::vector<std::string>{"script rank 0 of 2: a b", "script rank 1 of 2: a b"}));
}

}  // namespace
}  // namespace braid_launcher_test
