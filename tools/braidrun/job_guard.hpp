// A process that outlives braidrun to end the job when braidrun dies.
//
// Each rank is started with PR_SET_PDEATHSIG, but that signal reaches only the rank itself (the
// kernel clears it in the rank's children), so what a wrapper script started would run on with
// nobody supervising it once braidrun was killed. The guard reads the ranks' process groups from
// a pipe braidrun holds the other end of; any death of braidrun, SIGKILL included, closes that
// end, and the guard SIGKILLs every group it still knows of, then exits.
#pragma once

#include <sys/types.h>

#include "net/unique_fd.hpp"

namespace braidrun {

class JobGuard {
 public:
  // Forks the guard. Call before braidrun starts any thread (the child allocates).
  JobGuard();
  // Tells the guard the job is over: it ends whatever is still listed, exits, and is reaped.
  ~JobGuard();
  JobGuard(const JobGuard &) = delete;
  JobGuard &operator=(const JobGuard &) = delete;

  pid_t pid() const { return pid_; }
  // braidrun's reaping took the guard (it was killed): its pid is not to be waited for again.
  void reaped() { pid_ = -1; }

  void watch(pid_t group);
  // The group is gone: its id may be reused by an unrelated group, so it is never signalled.
  void forget(pid_t group);

 private:
  void send(int op, pid_t group);
  braid::net::UniqueFd pipe_;
  pid_t pid_ = -1;
};

}  // namespace braidrun
