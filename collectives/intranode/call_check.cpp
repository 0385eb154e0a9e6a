#include "intranode/call_check.hpp"

#include <cstring>
#include <string>
#include <utility>

#include "error.hpp"
#include "reduce/dtype.hpp"

namespace braid::coll {
namespace {

const char *kind_text(int32_t kind) {
  return kind == static_cast<int32_t>(CollKind::allreduce)   ? "allreduce"
         : kind == static_cast<int32_t>(CollKind::broadcast) ? "broadcast"
         : kind == static_cast<int32_t>(CollKind::barrier)   ? "barrier"
                                                             : "another collective";
}

bool same_call(const CallRecord &a, const CallRecord &b) {
  return a.kind == b.kind && a.count == b.count && a.dtype == b.dtype && a.op == b.op &&
         a.root == b.root;
}

CallRecord record_of(const CollArgs &args, uint64_t seq) {
  CallRecord r;
  r.seq = seq;
  r.kind = static_cast<int32_t>(args.kind);
  r.count = args.count;
  r.dtype = static_cast<int32_t>(args.dtype);
  // Only what the kind uses: a broadcast has no op, an allreduce no root.
  r.op = args.kind == CollKind::allreduce ? static_cast<int32_t>(args.op) : -1;
  r.root = args.kind == CollKind::broadcast ? args.root : -1;
  return r;
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

Task agree_on_call(CollContext &ctx, NodeChannel &ch, uint32_t turn, const CollArgs &args,
                   const void *tiny, size_t tiny_bytes) {
  // A rank alone on its node (hierarchical) has no segment and nobody to agree with.
  if (ch.size() == 1) co_return;
  const CallRecord mine = record_of(args, ctx.seq());
  CallSlot &slot = ch.call_slot(ch.me(), turn);
  slot.record = mine;
  if (tiny_bytes > 0) std::memcpy(slot.data, tiny, tiny_bytes);
  ch.publish(&PeerControl::entered, turn + 1);
  for (int s = 0; s < ch.size(); ++s) {
    if (s == ch.me()) continue;
    co_await ctx.wait_flag(ch.flag(s, &PeerControl::entered, turn + 1, "enter this collective"));
    const CallRecord theirs = ch.call_slot(s, turn).record;
    // The message is only worded when the calls differ: formatting costs more than the call.
    if (same_call(mine, theirs)) continue;
    std::string why = difference(ch.world_rank(ch.me()), mine, ch.world_rank(s), theirs);
    if (!why.empty()) detail::fail(BRAID_ERR_MISMATCH, why);
  }
}

}  // namespace braid::coll
