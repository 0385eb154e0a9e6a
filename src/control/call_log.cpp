#include "control/call_log.hpp"

namespace braid::detail {

void CallLog::publish(uint64_t seq, uint32_t kind, uint64_t count, int32_t dtype, int32_t op,
                      int32_t root, const char *algorithm) {
  Slot &s = slots_[seq % kSlots];
  // A seqlock without fences (ThreadSanitizer does not model fences): each field is a release
  // store, so a reader that sees any new field also sees the stamp cleared before it.
  s.stamp.store(0, std::memory_order_relaxed);
  s.kind.store(kind, std::memory_order_release);
  s.count.store(count, std::memory_order_release);
  s.dtype.store(dtype, std::memory_order_release);
  s.op.store(op, std::memory_order_release);
  s.root.store(root, std::memory_order_release);
  s.algorithm.store(algorithm, std::memory_order_release);
  s.stamp.store(seq + 1, std::memory_order_release);
  entered_.store(seq + 1, std::memory_order_release);
}

bool CallLog::read(uint64_t seq, CallSignature *out) const {
  const Slot &s = slots_[seq % kSlots];
  if (s.stamp.load(std::memory_order_acquire) != seq + 1) return false;
  out->seq = seq;
  out->kind = s.kind.load(std::memory_order_acquire);
  out->count = s.count.load(std::memory_order_acquire);
  out->dtype = s.dtype.load(std::memory_order_acquire);
  out->op = s.op.load(std::memory_order_acquire);
  out->root = s.root.load(std::memory_order_acquire);
  const char *algorithm = s.algorithm.load(std::memory_order_acquire);
  if (s.stamp.load(std::memory_order_relaxed) != seq + 1) return false;
  out->algorithm = algorithm ? algorithm : "";
  return true;
}

CallLookup CallLog::lookup(uint64_t seq) const {
  CallLookup out;
  out.entered = entered();
  if (seq >= out.entered) {
    out.state = CallLookup::State::not_entered;
    if (out.entered > 0 && !read(out.entered - 1, &out.sig)) out.sig = {};
    return out;
  }
  out.state = read(seq, &out.sig) ? CallLookup::State::entered : CallLookup::State::forgotten;
  return out;
}

}  // namespace braid::detail
