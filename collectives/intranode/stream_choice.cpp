#include "intranode/stream_choice.hpp"

namespace braid::coll {

bool StreamChoice::decide(size_t footprint, bool hold) {
  pending_ = false;
  counted_ = false;
  if (footprint == 0) return false;
  bool streams = false;
  if (everywhere_) {
    streams = hold && streamed_first_ ? true : timed_choice(footprint, hold);
  } else {
    if (cache_bytes_ == 0) return false;
    if (cache_bytes_ == 1) {  // BRAID_CACHE_BYTES=1
      streamed_calls_.fetch_add(1, std::memory_order_relaxed);
      counted_ = true;
      return true;
    }
    const double share = this->share(footprint);
    streams = share > kAlways;
    if (share > kNever && !streams) streams = timed_choice(footprint, hold);
  }
  if (streams) streamed_calls_.fetch_add(1, std::memory_order_relaxed);
  counted_ = streams;
  return streams;
}

void StreamChoice::forget() {
  if (counted_) streamed_calls_.fetch_sub(1, std::memory_order_relaxed);
  counted_ = false;
  pending_ = false;
}

bool StreamChoice::timed_choice(size_t footprint, bool hold) {
  // The chooser's "single" is the way the share suggests: a class's first three calls go that
  // way (the first not counted: cold either way, the first writes into a receive buffer's
  // pages), the fourth and fifth try the other.
  if (chooser_.rate(true, footprint) == 0 && chooser_.rate(false, footprint) == 0)
    chooser_.seed(footprint, 1.0, 0.9);
  const bool suggested = hold ? chooser_.preferred(footprint) : chooser_.prefer_single(footprint);
  pending_ = !hold;
  unsettled_ = !hold && chooser_.unsettled(footprint);
  suggested_ = suggested;
  footprint_ = footprint;
  return suggested == suggests_streaming(footprint);
}

bool StreamChoice::measured(uint64_t ns, bool skip) {
  if (!pending_) return false;
  pending_ = false;
  if (!skip) chooser_.measured(suggested_, footprint_, ns);
  return unsettled_;
}

double StreamChoice::rate(bool streamed, size_t footprint) const {
  if (cache_bytes_ == 0 && !everywhere_) return 0;
  return chooser_.rate(streamed == suggests_streaming(footprint), footprint);
}

}  // namespace braid::coll
