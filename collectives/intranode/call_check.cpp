#include "intranode/call_check.hpp"

#include <string>
#include <utility>

#include "error.hpp"
#include "reduce/dtype.hpp"

namespace braid::coll {
namespace {

const char *kind_text(int32_t kind) {
  return kind == static_cast<int32_t>(CollKind::allreduce)   ? "allreduce"
         : kind == static_cast<int32_t>(CollKind::broadcast) ? "broadcast"
                                                             : "another collective";
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

Task agree_on_call(CollContext &ctx, NodeChannel &ch, uint32_t turn, const CollArgs &args) {
  // Alone on its node (hierarchical with an uneven layout), a rank has no segment and no one to
  // agree with here; the leaders' stage checks it against the other nodes.
  if (ch.size() == 1) co_return;
  const CallRecord mine = record_of(args, ctx.seq());
  ch.call_record(ch.me(), turn) = mine;
  ch.publish(&PeerControl::entered, turn + 1);
  for (int s = 0; s < ch.size(); ++s) {
    if (s == ch.me()) continue;
    co_await ctx.wait_flag(ch.flag(s, &PeerControl::entered, turn + 1, "enter this collective"));
    std::string why =
        difference(ch.world_rank(ch.me()), mine, ch.world_rank(s), ch.call_record(s, turn));
    if (!why.empty()) detail::fail(BRAID_ERR_MISMATCH, why);
  }
}

}  // namespace braid::coll
