// Process-wide state braidrun changes for itself and the ranks must not inherit.
//
// braidrun blocks SIGINT/SIGTERM/SIGCHLD and reads them from a signalfd, so supervision sleeps
// in poll() and never races a signal handler; it ignores SIGPIPE so a closed stdout cannot kill
// it; it raises the open-file limit because --tag-output needs two pipes per rank. Signal masks,
// ignored dispositions and rlimits survive exec, so each rank restores the originals first.
#pragma once

#include <signal.h>
#include <sys/resource.h>

#include "net/unique_fd.hpp"

namespace braidrun {

using braid::net::UniqueFd;

struct InheritedState {
  sigset_t signal_mask;
  struct sigaction sigpipe_action;
  struct sigaction sigchld_action;
  rlimit open_files;
};

// Applies braidrun's own settings and returns what the ranks should get instead.
InheritedState prepare_launcher_process();

// Readable whenever SIGINT, SIGTERM or SIGCHLD is pending. Call after prepare_launcher_process().
UniqueFd open_signal_fd();

// Runs in the forked child before exec; async-signal-safe.
void restore_inherited_state(const InheritedState &state) noexcept;

}  // namespace braidrun
