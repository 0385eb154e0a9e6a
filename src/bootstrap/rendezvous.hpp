// Forming the job: the star of connections through rank 0 that the bootstrap runs on.
#pragma once

#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/socket.hpp"
#include "bootstrap/star.hpp"

namespace braid::detail::bs {

// Rank 0: listens on cfg.host:cfg.port (or accepts on `listener` when it is valid) and accepts
// the other ranks until all have joined or cfg.timeout_s passes, refusing (and logging) every
// connection that is not a rank of this job.
Star accept_ranks(const BootstrapConfig &cfg, Fd listener = Fd());

// Ranks other than 0: connects to rank 0 at the first of its addresses that answers (retrying
// until cfg.timeout_s) and waits until it reports that the whole job has formed.
Star join_root(const BootstrapConfig &cfg);

// Extra time a non-zero rank waits for rank 0 beyond timeout_s. Rank 0 runs its own timeout_s
// clock over the same wait and, when it expires, tells everyone which rank it was waiting for;
// the grace lets that precise report arrive before the waiting rank gives up on rank 0 itself.
inline double follower_wait_s(double timeout_s) {
  return timeout_s + (timeout_s < 5.0 ? timeout_s : 5.0);
}

}  // namespace braid::detail::bs
