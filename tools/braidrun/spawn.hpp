// Starting one rank: fork, child-side setup, execvp. The parent learns whether exec succeeded
// through a close-on-exec pipe, so "program not found" is reported by braidrun as an error
// naming the program rather than showing up later as a rank that exited with 127.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "net/unique_fd.hpp"
#include "process_state.hpp"

namespace braidrun {

using braid::net::UniqueFd;

struct RankProcess {
  int rank = 0;
  pid_t pid = -1;     // also the id of the rank's own process group
  std::string where;  // "" for a local rank; "nodeB via ssh" for one started by the agent
  UniqueFd out;       // read ends of the rank's stdout/stderr, only with capture_output
  UniqueFd err;
};

struct SpawnRequest {
  int rank = 0;
  const std::vector<std::string> *argv = nullptr;         // argv[0] is looked up in PATH
  const std::vector<std::string> *environment = nullptr;  // NAME=VALUE entries
  bool capture_output = false;  // stdout/stderr into pipes instead of inheriting braidrun's
  const InheritedState *inherited = nullptr;
  // stdin from /dev/null instead of braidrun's: for launch agents, which (like ssh) would
  // otherwise all read braidrun's input, and for every local rank but rank 0.
  bool null_stdin = false;
  // CPU affinity set in the child before exec (--bind-to); nullptr leaves braidrun's.
  const cpu_set_t *affinity = nullptr;
};

// The rank could not be started; what() is the complete message, exit_status what braidrun
// should exit with (127 not found, 126 not executable, 1 anything else).
class SpawnError : public std::runtime_error {
 public:
  SpawnError(const std::string &message, int exit_status)
      : std::runtime_error(message), exit_status_(exit_status) {}
  int exit_status() const { return exit_status_; }

 private:
  int exit_status_;
};

// Returns once the rank has exec'd the program. Throws SpawnError (child already reaped) or
// std::system_error if braidrun itself could not create pipes or fork.
RankProcess spawn_rank(const SpawnRequest &request);

}  // namespace braidrun
