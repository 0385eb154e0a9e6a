// Runs a launched job to its end: reaps ranks, forwards braidrun's SIGINT/SIGTERM, forwards
// tagged output, and on the first abnormal rank exit stops the rest of the job (SIGTERM, then
// SIGKILL after a grace period). Everything is driven by one poll() over a signalfd and the
// output pipes, so braidrun sleeps while the job runs.
#pragma once

#include <vector>

#include "job_guard.hpp"
#include "net/unique_fd.hpp"
#include "spawn.hpp"

namespace braidrun {

using braid::net::UniqueFd;

// signal_fd must report SIGINT, SIGTERM and SIGCHLD (see open_signal_fd); `guard` is told each
// rank's process group and when it is gone. Returns braidrun's exit status: 0 if every rank
// exited 0, else the first failing rank's code or 128+signal; 1 if processes of the job
// outlived SIGKILL and braidrun gave up on them.
int supervise(std::vector<RankProcess> ranks, UniqueFd signal_fd, JobGuard &guard);

}  // namespace braidrun
