// Starting a job of fault_rank processes, by hand through the environment contract (as a batch
// system would) or under braidrun, and reading what each rank reported.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace faults {

struct Report {  // one RESULT or LATER line
  bool present = false;
  int code = -1;
  long long t_ns = 0;  // RESULT: when the error was returned; LATER: how long the call took
  std::string msg;
};

struct RankOutput {
  Report result;
  Report later;
  long long kill_ns = 0;   // KILL line (the victim)
  long long start_ns = 0;  // START line: the scenario began (after braid_init)
  int exit_code = -1;      // -1: did not exit normally
  int signal = 0;
};

struct JobOutput {
  std::vector<RankOutput> ranks;
  std::string err;         // every rank's stderr (hand-started) or braidrun's
  int launcher_exit = -1;  // braidrun's exit code
  long long kill_ns = 0;   // when the victim killed itself (0: nobody did)
};

using Env = std::map<std::string, std::string>;

// Starts `size` ranks of fault_rank with BRAID_RANK/SIZE/BOOTSTRAP/JOB_KEY set by hand plus
// `env`; waits for all (killing them after deadline_s).
JobOutput run_by_hand(int size, const Env &env, double deadline_s);
// The same under braidrun -n size --tag-output.
JobOutput run_under_braidrun(int size, const Env &env, double deadline_s);

// A TCP port on 127.0.0.1 that was free a moment ago, outside the ephemeral range
// (tests/common/free_port.hpp).
int free_port();

// Runs one process with env, returning stdout+stderr and its exit code.
struct Process {
  int pid = -1;
  int out_fd = -1;  // stdout
  int err_fd = -1;  // stderr
};
Process spawn(const std::vector<std::string> &argv, const Env &env);

}  // namespace faults
