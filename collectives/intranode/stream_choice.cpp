#include "intranode/stream_choice.hpp"

namespace braid::coll {

bool StreamChoice::decide(size_t footprint, bool hold) {
  pending_ = false;
  if (cache_bytes_ == 0 || footprint == 0) return false;
  if (cache_bytes_ == 1) {  // BRAID_CACHE_BYTES=1
    streamed_calls_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  const double share = static_cast<double>(footprint) * static_cast<double>(cache_ranks_) /
                       static_cast<double>(cache_bytes_);
  bool streams = share > kAlways;
  if (share > kNever && !streams) {
    // The first call of a size class streams and is not counted (it is cold either way: the
    // first writes into a receive buffer's pages); the seed then puts first whichever the share
    // suggests, until each has been timed.
    if (chooser_.rate(true, footprint) == 0 && chooser_.rate(false, footprint) == 0)
      chooser_.seed(footprint, 1.0, share > 1 ? 0.9 : 1.1);
    streams = hold ? chooser_.preferred(footprint) : chooser_.prefer_single(footprint);
    pending_ = !hold;
    unsettled_ = !hold && chooser_.unsettled(footprint);
    streamed_ = streams;
    footprint_ = footprint;
  }
  if (streams) streamed_calls_.fetch_add(1, std::memory_order_relaxed);
  return streams;
}

bool StreamChoice::measured(uint64_t ns, bool skip) {
  if (!pending_) return false;
  pending_ = false;
  if (!skip) chooser_.measured(streamed_, footprint_, ns);
  return unsettled_;
}

}  // namespace braid::coll
