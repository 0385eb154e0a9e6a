// How block algorithms cut `count` elements into `blocks` near-equal contiguous blocks (sizes
// differ by at most one element). Every rank computes the same cut, so both ends of a message
// agree on its size without sending it.
#pragma once

#include <cstddef>

namespace braid::coll {

// First element of block b (block_start(count, blocks, blocks) == count). Written as
// q*b + r*b/blocks so that it cannot overflow for any count.
inline size_t block_start(size_t count, int blocks, int b) {
  const size_t q = count / static_cast<size_t>(blocks);
  const size_t r = count % static_cast<size_t>(blocks);
  return q * static_cast<size_t>(b) + r * static_cast<size_t>(b) / static_cast<size_t>(blocks);
}

}  // namespace braid::coll
