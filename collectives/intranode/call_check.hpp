// Ranks of a node agree on the call before any data moves: each publishes what it called
// (kind, count, dtype, op, root) and checks every other rank's record for the same turn. A
// disagreement fails the call on every rank of the node with BRAID_ERR_MISMATCH naming both
// sides, before any window is taken, so the node's window sequence stays in step and nothing is
// read or written past a buffer the caller sized differently.
#pragma once

#include "engine/coll_args.hpp"
#include "intranode/node_channel.hpp"

namespace braid::coll {

// This call's node turn: a new one, or the one the inline path took (CollArgs::turn_taken).
inline uint32_t call_turn(NodeChannel &ch, const CollArgs &args) {
  return args.turn_taken ? args.turn : ch.take_turn();
}

// The record of this rank's call number `seq` (CollContext::seq).
CallRecord record_of(const CollArgs &args, uint64_t seq);
bool same_call(const CallRecord &a, const CallRecord &b);
// Writes and publishes this rank's record (and tiny data) for `turn`, once nobody may still
// read the slot (see NodeChannel::slot_blocker; the caller waited for that).
void write_record(NodeChannel &ch, uint32_t turn, const CallRecord &mine, const void *tiny,
                  size_t tiny_bytes);

// Whose records a rank waits for after publishing its own: every other rank's, one local
// rank's (a small broadcast's or scatter's receivers need only the root's), or nobody's (a rank
// that only hands its data over: a small gather's or reduce's non-root, a broadcast's or
// scatter's root, as an eager send returns in MPI).
inline constexpr int kEveryone = -1;
inline constexpr int kNobody = -2;
// Whether local rank `s` is one of `who` (kEveryone, a local rank, kNobody) other than `me`.
inline bool among(int s, int who, int me) {
  return s != me && (who == kEveryone || s == who);
}

// `turn` is the ticket this rank's call took (call_turn). When the inline path already
// published this rank's record (CollArgs::entered) only the others' are awaited. `tiny` (up to
// sizeof(CallSlot::data) bytes, or null) travels with the record: once this returns, the
// records (and data) waited for are in ch.call_slot(rank, turn).data, readable until this rank
// enters its next call. `ahead`: how many calls this rank may be ahead of the others at entry
// (NodeChannel::slot_blocker): 1, or kCallsAhead in a small call but a gather's or
// reduce's senders' (calls_ahead, tiny_calls.hpp).
//
// A rank that waited for nobody has not compared its record with anyone's: `check_later` (a
// local rank, kEveryone, or kNobody) is whose it compares at a later entry, before publishing
// that call's record (settle_checks). A non-root of a small gather or reduce checks the root it
// named: if that rank agrees it is the root, it waited for every record and saw any
// disagreement. A root that hands its data over (broadcast, scatter) checks every record: its
// receivers each compared their record with the root they named only. So a disagreement that
// no waiting rank could see (two ranks that both think they are a broadcast's root, two ranks
// that each name the other as a reduce's root) still fails, up to kCallSlots - kCallsAhead
// calls late (at once at a call that waits for every rank), naming both sides in the same words
// on every rank that finds it; one that a waiting rank saw reaches the others through the
// control plane.
Task agree_on_call(CollContext &ctx, NodeChannel &ch, uint32_t turn, const CollArgs &args,
                   const void *tiny = nullptr, size_t tiny_bytes = 0, int wait_for = kEveryone,
                   int check_later = kNobody, uint32_t ahead = 1);

// The checks this rank left for later (agree_on_call), before it publishes its record of
// `turn`: compares the records that are there, and those it must not leave any longer (the
// others rewrite their slot of turn t once this rank entered t + kCallSlots - kCallsAhead; they
// are there, as this rank's slot waited for every rank to enter turn - kCallsAhead). Every one,
// waiting where needed, for a call that waits for every rank (`wait_for`: it reports a
// disagreement before publishing, so that nobody completes it without this rank) or is held to
// one call ahead (`ahead` 1, as before). `done`: no check is due any more. `wait`: a due one's
// record is not there yet: wait for local rank *rank to enter *at. `differs`: the records of *at
// differ (report_previous names them once every rank entered it).
enum class Settle { done, wait, differs };
Settle settle_checks(NodeChannel &ch, uint32_t turn, int wait_for, uint32_t ahead, int *rank,
                     uint32_t *at);
// Every rank has entered `prev` and the records differ: fails naming the first rank whose
// record differs from local rank 0's, so every rank that finds it words it the same.
[[noreturn]] void report_previous(NodeChannel &ch, uint32_t prev);

// Waits until no other rank may still read this rank's call slot for `turn` and every other rank
// has entered turn - `ahead` (agree_on_call waits for this too). A root that does not wait for
// its readers' records calls it (ahead 1) before deciding what to offer them, so that what they
// said after the call before that one (PeerControl::wants_single) is there to read.
Task wait_for_slot(CollContext &ctx, NodeChannel &ch, uint32_t turn, uint32_t ahead = 1);

// After agree_on_call waited for fewer records than everyone's: waits for every other rank's
// record of `turn` and compares it with this rank's (the check it deferred is then done). A
// broadcast or scatter whose root's buffer is mapped calls it before its agreement step, which
// rewrites this rank's PeerControl::direct_ok: a rank still in the previous call may not have
// read that yet, and only a rank that entered this call has.
Task agree_with_everyone(CollContext &ctx, NodeChannel &ch, uint32_t turn);

}  // namespace braid::coll
