#include "intranode/inline_call.hpp"

#include <algorithm>
#include <cstddef>

#include "error.hpp"
#include "intranode/call_check.hpp"
#include "intranode/tiny_calls.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {
namespace {

// Asks for the lines of `span` in `slot` that the record's own line does not hold, up to
// kPrefetchBytes, while this rank waits for the slot's mark. The peer writes its data before
// its mark, so without this the data lines are requested only once the mark is seen: two
// cache-line transfers one after the other instead of side by side (2 ranks, 32-256 B
// broadcasts: 0.40-0.43 us against 0.23-0.27 with it). A line asked for before the peer wrote
// it is asked for again at the next poll, its copy having been invalidated by the write.
constexpr size_t kPrefetchBytes = 256;
constexpr size_t kInFirstLine = 64 - offsetof(CallSlot, data);

inline void prefetch_span(const CallSlot &slot, ReadSpan span) {
  const size_t begin = std::max(span.offset, kInFirstLine);
  const size_t end = std::min(span.offset + span.bytes, begin + kPrefetchBytes);
  for (size_t b = begin; b < end; b += 64) __builtin_prefetch(slot.data + b);
  if (begin < end) __builtin_prefetch(slot.data + end - 1);  // the last line's, when unaligned
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

bool complete_inline(NodeChannel &ch, CollArgs &args, uint64_t seq, int ranks, unsigned polls) {
  if (ch.size() < 2 || !ch.idle()) return false;
  uint64_t stage[sizeof(CallSlot::data) / sizeof(uint64_t)];
  const TinyPlan tiny = tiny_plan(ch, args, stage);
  if (!tiny.fits) return false;
  // An alltoallv whose blocks this rank cannot pack is large whatever the others do: its record
  // is the coroutine's to write (it describes the send buffer, shm_alltoallv.cpp).
  if (args.kind == CollKind::alltoallv && !alltoallv_packed(stage)) return false;
  const uint32_t turn = ch.take_turn();  // held from here: nothing else was in flight
  args.turn_taken = true;
  args.turn = turn;
  const uint32_t ahead = calls_ahead(args.kind, tiny.wait_for);
  if (ch.slot_blocker(turn, ahead) >= 0) return false;
  int rank = -1;
  uint32_t at = 0;
  if (settle_checks(ch, turn, tiny.wait_for, ahead, &rank, &at) != Settle::done) return false;
  const CallRecord mine = record_of(args, seq);
  tiny_prepare(ch, args);
  write_record(ch, turn, mine, tiny.data, tiny.bytes);
  args.entered = true;
  if (tiny.check_later != kNobody) ch.defer_check(turn, tiny.check_later);
  for (int s = 0; s < ch.size(); ++s) {
    if (!among(s, tiny.wait_for, ch.me())) continue;
    const FlagWait entered = ch.entered(s, turn, "");
    const CallSlot &slot = ch.call_slot(s, turn);
    const ReadSpan span = tiny_read_span(ch, args, s);
    for (unsigned left = polls; !entered.reached(); --left) {
      if (left == 0) return false;
      prefetch_span(slot, span);
      cpu_relax();
    }
    ch.saw_entered(s, turn + 1);
    if (!same_call(mine, ch.call_slot(s, turn).record)) return false;
  }
  try {
    // False: not small after all (alltoallv); the coroutine takes the large path.
    if (!tiny_finish(ch, turn, args)) return false;
  } catch (const detail::Disagreement &) {
    return false;  // counts that disagree, found before anything was written: reported there
  }
  if (needs_average(args)) finish_average(args.recvbuf, args.count, args.dtype, ranks);
  ch.end_turn();
  ch.count_inline_call();
  return true;
}

}  // namespace braid::coll
