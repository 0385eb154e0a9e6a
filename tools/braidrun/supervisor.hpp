// Runs a launched job to its end: reaps ranks, forwards braidrun's SIGINT/SIGTERM, forwards
// tagged output, and on the first abnormal rank exit stops the rest of the job (SIGTERM, then
// SIGKILL after a grace period). Everything is driven by one poll() over a signalfd and the
// output pipes, so braidrun sleeps while the job runs.
#pragma once

#include <vector>

#include "net/unique_fd.hpp"
#include "spawn.hpp"

namespace braidrun {

using braid::net::UniqueFd;

// signal_fd must report SIGINT, SIGTERM and SIGCHLD (see open_signal_fd). Returns braidrun's exit
// status: 0 if every rank exited 0, else the first failing rank's code or 128+signal.
int supervise(std::vector<RankProcess> ranks, UniqueFd signal_fd);

}  // namespace braidrun
