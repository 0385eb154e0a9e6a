#include "launch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "rank_environment.hpp"
#include "remote_command.hpp"

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
                                      const std::vector<Placement> &placement,
                                      const InheritedState &inherited,
                                      const BindingPlan &bindings) {
  const int size = static_cast<int>(placement.size());
  const std::vector<std::string> agent = split_agent(options.launch_agent);
  const std::vector<std::string> agent_env = agent_environment(environ);
  std::vector<RankProcess> ranks;
  ranks.reserve(placement.size());
  size_t local_index = 0;
  try {
    for (int rank = 0; rank < size; ++rank) {
      const Placement &where = placement[static_cast<std::size_t>(rank)];
      std::vector<std::string> environment =
          rank_environment(environ, options, job, rank, size, where);
      if (where.local) {
        SpawnRequest request{rank, &options.command, &environment, options.tag_output, &inherited};
        // Standard input goes to rank 0, as mpirun's does: shared by every local rank, input
        // was split between them at random. Not a terminal: rank 0, in a session of its own,
        // would read it behind job control (braidrun in the background, the shell prompting).
        request.null_stdin = rank != 0 || isatty(STDIN_FILENO) != 0;
        // braid sees from every rank's affinity mask whether ranks share CPUs
        // (node_discovery.hpp), so a rank bound to a core of its own spins as it should.
        if (local_index < bindings.ranks.size() && bindings.ranks[local_index].bound)
          request.affinity = &bindings.ranks[local_index].cpus;
        ++local_index;
        ranks.push_back(spawn_rank(request));
        continue;
      }
      const std::vector<std::string> argv =
          remote_command(agent, where.host, environment, options.command);
      ranks.push_back(
          spawn_rank(SpawnRequest{rank, &argv, &agent_env, options.tag_output, &inherited, true}));
      const std::string &agent_path = agent.front();
      ranks.back().where = where.host + " via " + agent_path.substr(agent_path.rfind('/') + 1);
    }
  } catch (...) {
    kill_and_reap(ranks);
    throw;
  }
  return ranks;
}

}  // namespace braidrun
