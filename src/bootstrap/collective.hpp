// One bootstrap collective over the star: every rank sends its block to rank 0, rank 0
// concatenates them and sends the whole to every rank. A barrier is the same with no data.
// Rank 0 checks that every rank called the same collective with the same size; it is also the
// only rank that sees everyone, so it decides every failure and reports it to all ranks in an
// error frame, which is how a rank learns which other rank was at fault.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bootstrap/rendezvous.hpp"
#include "bootstrap/wire.hpp"

namespace braid::detail::bs {

struct CollectiveCall {
  FrameType kind = FrameType::allgather;  // allgather or barrier
  const char *op = "";                    // "bootstrap allgather: ", starts every message
  uint32_t seq = 0;
  const void *in = nullptr;
  void *out = nullptr;  // size*bytes
  size_t bytes = 0;
  int size = 0;
  double timeout_s = 0;
};

// Both throw Failure: BRAID_ERR_MISMATCH (the star stays usable), or BRAID_ERR_TIMEOUT /
// BRAID_ERR_PEER_FAILED naming the rank at fault (the star is then unusable).
void root_collective(Star &star, const CollectiveCall &call);
void leaf_collective(Star &star, const CollectiveCall &call);

}  // namespace braid::detail::bs
