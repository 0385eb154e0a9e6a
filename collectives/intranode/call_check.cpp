#include "intranode/call_check.hpp"

#include "kernels/stream_copy.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "error.hpp"
#include "kernels/dtype.hpp"

namespace braid::coll {
namespace {

const char *kind_text(int32_t kind) {
  const KindInfo *info = find_kind(static_cast<uint32_t>(kind));
  return info ? info->name : "another collective";
}

// "" when a and b agree, else what differs, naming both ranks (the lower first, so every rank
// words it the same way).
std::string difference(int rank_a, CallRecord a, int rank_b, CallRecord b) {
  using detail::cat;
  if (rank_a > rank_b) {
    std::swap(rank_a, rank_b);
    std::swap(a, b);
  }
  const std::string ra = cat("rank ", rank_a), rb = cat("rank ", rank_b);
  if (a.kind != b.kind)
    return cat(ra, " is in ", kind_text(a.kind), " #", a.seq, ", ", rb, " in ", kind_text(b.kind),
               " #", b.seq);
  if (a.count != b.count)
    return cat(ra, " passed ", a.count, " elements, ", rb, " passed ", b.count);
  if (a.dtype != b.dtype)
    return cat(ra, " passed dtype ", dtype_name(static_cast<braid_dtype_t>(a.dtype)), ", ", rb,
               " passed ", dtype_name(static_cast<braid_dtype_t>(b.dtype)));
  if (a.op != b.op)
    return cat(ra, " passed op ", op_name(static_cast<braid_op_t>(a.op)), ", ", rb, " passed ",
               op_name(static_cast<braid_op_t>(b.op)));
  if (a.root != b.root) return cat(ra, " passed root ", a.root, ", ", rb, " passed root ", b.root);
  return "";
}

}  // namespace

bool same_call(const CallRecord &a, const CallRecord &b) {
  return a.kind == b.kind && a.count == b.count && a.dtype == b.dtype && a.op == b.op &&
         a.root == b.root;
}

CallRecord record_of(const CollArgs &args, uint64_t seq) {
  const AgreedFields f = agreed_fields(args);
  CallRecord r;
  r.seq = seq;
  r.kind = static_cast<int32_t>(f.kind);
  r.count = f.count;
  r.dtype = f.dtype;
  r.op = f.op;
  r.root = f.root;
  return r;
}

namespace {

// From how many bytes the data a record carries is written with streaming stores: the slot was
// read by the others kCallSlots turns ago, and in a slow spell of the core-to-core link
// (docs/intranode.md, "Deposits into the windows") ordinary stores into lines another core has
// read are what a call costs. 2 ranks, interleaved rounds, broadcast in a slow spell: 8 KiB
// 1.0 us streamed against 4.2 (Open MPI 2.8); on a fast day level. Records of 4 KiB (2-rank
// alltoall of 2 KiB blocks, reduce-scatter of 4 KiB) streamed cost a fast day 0.4 us where
// Open MPI takes 0.7-1.0, so only the largest records stream (CallSlot::data holds 8224).
constexpr size_t kStreamedRecordBytes = 8192;

}  // namespace

void write_record(NodeChannel &ch, uint32_t turn, const CallRecord &mine, const void *tiny,
                  size_t tiny_bytes) {
  CallSlot &slot = ch.call_slot(ch.me(), turn);
  // The readers poll the mark's line: the lines after it first, then that line's record and
  // data right before the mark, so that a reader's poll between the stores does not take the
  // line away and make the mark wait for it again (one more cache-line round trip).
  constexpr size_t kOnMarkLine = 64 - offsetof(CallSlot, data);
  const size_t first = std::min(tiny_bytes, kOnMarkLine);
  if (tiny_bytes > first)
    copy_result(slot.data + first, static_cast<const char *>(tiny) + first, tiny_bytes - first,
                tiny_bytes >= kStreamedRecordBytes);
  slot.record = mine;
  if (first > 0) std::memcpy(slot.data, tiny, first);
  ch.publish_entry(turn);
}

namespace {

// Local rank s has published its record of `turn`: fails if it differs from `mine`.
void compare_record(NodeChannel &ch, uint32_t turn, const CallRecord &mine, int s) {
  ch.saw_entered(s, turn + 1);
  const CallRecord theirs = ch.call_slot(s, turn).record;
  // The message is only worded when the calls differ: formatting costs more than the call.
  if (same_call(mine, theirs)) return;
  std::string why = difference(ch.world_rank(ch.me()), mine, ch.world_rank(s), theirs);
  if (!why.empty()) throw detail::Disagreement(why);
}

FlagWait entered(NodeChannel &ch, int s, uint32_t turn) {
  return ch.entered(s, turn, "enter this collective");
}

// Whether this rank's record of `prev` equals `who`'s (every rank's for kEveryone), which
// have entered it.
bool records_agree(NodeChannel &ch, uint32_t prev, int who) {
  const CallRecord mine = ch.call_slot(ch.me(), prev).record;
  for (int s = 0; s < ch.size(); ++s)
    if (among(s, who, ch.me()) && !same_call(mine, ch.call_slot(s, prev).record)) return false;
  return true;
}

}  // namespace

void report_previous(NodeChannel &ch, uint32_t prev) {
  ch.clear_unchecked();
  const CallRecord first = ch.call_slot(0, prev).record;
  const CallRecord mine = ch.call_slot(ch.me(), prev).record;
  std::string why;
  for (int s = 1; s < ch.size() && why.empty(); ++s)
    why = difference(ch.world_rank(0), first, ch.world_rank(s), ch.call_slot(s, prev).record);
  throw detail::Disagreement(detail::cat(why, " (in ", kind_text(mine.kind), " #", mine.seq,
                                         ", which had returned on rank ", ch.world_rank(ch.me()),
                                         ")"));
}

Settle settle_checks(NodeChannel &ch, uint32_t turn, int wait_for, uint32_t ahead, int *rank,
                     uint32_t *at) {
  const bool all = wait_for == kEveryone || ahead == 1;
  // Oldest first; one that is settled leaves the list.
  while (!ch.unchecked().empty()) {
    const NodeChannel::Unchecked u = ch.unchecked().front();
    const bool due = all || turn - u.turn >= kCallSlots - kCallsAhead;
    int missing = -1;
    for (int s = 0; s < ch.size() && missing < 0; ++s)
      if (among(s, u.who, ch.me()) && !ch.entered(s, u.turn, "").reached()) missing = s;
    if (missing >= 0) {
      // Not due: nor are the newer ones, whose records are likelier still missing; looking
      // would cost a remote cache line each, in every call of a root that runs ahead.
      if (!due) break;
      *rank = missing;
      *at = u.turn;
      return Settle::wait;
    }
    if (!records_agree(ch, u.turn, u.who)) {
      *at = u.turn;
      return Settle::differs;
    }
    ch.checked(u.turn);
  }
  return Settle::done;
}

Task agree_with_everyone(CollContext &ctx, NodeChannel &ch, uint32_t turn) {
  if (ch.size() == 1) co_return;
  const CallRecord mine = ch.call_slot(ch.me(), turn).record;  // as published
  for (int s = 0; s < ch.size(); ++s) {
    if (s == ch.me()) continue;
    co_await ctx.wait_flag(entered(ch, s, turn));
    compare_record(ch, turn, mine, s);
  }
  ch.checked(turn);
}

Task wait_for_slot(CollContext &ctx, NodeChannel &ch, uint32_t turn, uint32_t ahead) {
  for (int s; (s = ch.slot_blocker(turn, ahead)) >= 0;)
    co_await ctx.wait_flag(ch.slot_free(s, turn, ahead));
}

// First waits until no other rank may still read this rank's call slot and settles the checks
// it left for later, then publishes.
Task agree_on_call(CollContext &ctx, NodeChannel &ch, uint32_t turn, const CollArgs &args,
                   const void *tiny, size_t tiny_bytes, int wait_for, int check_later,
                   uint32_t ahead) {
  // A rank alone on its node (hierarchical) has no segment and nobody to agree with.
  if (ch.size() == 1) co_return;
  const CallRecord mine = record_of(args, ctx.seq());
  if (!args.entered) {
    co_await wait_for_slot(ctx, ch, turn, ahead);
    for (int s = -1;;) {
      uint32_t at = 0;
      const Settle settled = settle_checks(ch, turn, wait_for, ahead, &s, &at);
      if (settled == Settle::done) break;
      if (settled == Settle::wait) {
        co_await ctx.wait_flag(ch.entered(s, at, "enter an earlier collective"));
        continue;
      }
      for (int r = 0; r < ch.size(); ++r)  // every record, for the wording
        if (r != ch.me()) co_await ctx.wait_flag(ch.entered(r, at, "enter an earlier collective"));
      // Fails before publishing this turn: the ranks waiting in it then fail too, by the
      // notice, instead of completing it without this rank (publishing first was tried: a
      // receiver that had compared only the root's record then returned success). The turn
      // stays unpublished, so a rank that carries on after the error waits for it and times
      // out naming this rank: ranks are out of step after a disagreement.
      report_previous(ch, at);
    }
    write_record(ch, turn, mine, tiny, tiny_bytes);
  }
  if (check_later != kNobody) ch.defer_check(turn, check_later);
  for (int s = 0; s < ch.size(); ++s) {
    if (!among(s, wait_for, ch.me())) continue;
    co_await ctx.wait_flag(entered(ch, s, turn));
    compare_record(ch, turn, mine, s);
  }
}

}  // namespace braid::coll
