// Small blocking calls completed by the calling thread, without the scheduler: when nothing
// else is in flight on the communicator and the call's data fits in a call record
// (tiny_calls.hpp), the caller publishes its record, spins briefly for the others' and
// finishes at once. A collective object, its coroutine frames and the scheduler's progress
// loop cost more than the exchange itself on a fast link.
//
// Anything but the quick, agreeing case (a peer later than the spin, a record that differs, a
// peer still reading this rank's previous slot) is handed to the algorithm's coroutine with the
// turn taken and, where it got that far, the record published (CollArgs::turn_taken, entered):
// there every wait has its timeout and a disagreement is explained to every rank.
#pragma once

#include <cstdint>

#include "engine/coll_args.hpp"
#include "intranode/node_channel.hpp"

namespace braid::coll {

// True when the call completed here. False: `args` says what was done; start the algorithm
// with it. `seq`: the call's number on the communicator; `ranks`: the communicator's size (all
// on this node); `polls`: how many times to look at a peer's record before handing over.
bool complete_inline(NodeChannel &ch, CollArgs &args, uint64_t seq, int ranks, unsigned polls);

}  // namespace braid::coll
