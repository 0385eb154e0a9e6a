#include "launch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "rank_environment.hpp"

extern char **environ;

namespace braidrun {
namespace {

// Ranks started before the failure are waiting for peers that will never come; nothing useful
// can happen in a grace period, so they are killed outright.
void kill_and_reap(const std::vector<RankProcess> &ranks) {
  for (const RankProcess &rank : ranks) {
    if (kill(-rank.pid, SIGKILL) != 0) kill(rank.pid, SIGKILL);
  }
  for (const RankProcess &rank : ranks) {
    int status;
    while (waitpid(rank.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace

std::vector<RankProcess> launch_ranks(const Options &options, const JobIdentity &job,
                                      const InheritedState &inherited) {
  std::vector<RankProcess> ranks;
  ranks.reserve(static_cast<std::size_t>(options.ranks));
  try {
    for (int rank = 0; rank < options.ranks; ++rank) {
      const std::vector<std::string> environment = rank_environment(environ, options, job, rank);
      ranks.push_back(spawn_rank(
          SpawnRequest{rank, &options.command, &environment, options.tag_output, &inherited}));
    }
  } catch (...) {
    kill_and_reap(ranks);
    throw;
  }
  return ranks;
}

}  // namespace braidrun
