// The small-call form of the node-local collectives: when a call's data fits in a call record
// (CallSlot::data), agreeing on the call is also the data exchange. This is one step for every
// kind: publish the record with this rank's data, wait for the records this rank needs (every
// rank's, the root's, or none for a rank that only hands its data over), then take what it
// needs from their slots. The same plan
// and finish serve the algorithms' coroutines and the inline path (inline_call.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/coll_args.hpp"
#include "intranode/call_check.hpp"
#include "intranode/node_channel.hpp"

namespace braid::coll {

struct TinyPlan {
  bool fits = false;           // the call travels with the records
  const void *data = nullptr;  // what this rank's record carries
  size_t bytes = 0;
  int wait_for = kEveryone;   // whose records it needs (kEveryone, a local rank, kNobody)
  int check_later = kNobody;  // whose it compares at its next call (agree_on_call)
};

// The plan for `args` on this rank; fits == false for calls too large for a record and for
// the kinds that have no small form here (the v-variants carry counts and check them first).
TinyPlan tiny_plan(const NodeChannel &ch, const CollArgs &args);

// Completes the call once every record of `turn` this rank needs is published and agreed
// (right after publishing its own when the plan does not wait).
void tiny_finish(NodeChannel &ch, uint32_t turn, const CollArgs &args);

}  // namespace braid::coll
