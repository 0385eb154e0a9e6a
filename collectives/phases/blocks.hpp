// Where each rank's block of a buffer lies (byte offset and length), for the phases that move
// one block per rank around. Every rank builds the same Blocks from the call's arguments, so
// both ends of a message agree on its size without sending it.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/partition.hpp"

namespace braid::coll {

struct Blocks {
  std::vector<size_t> off;  // bytes from the buffer's start
  std::vector<size_t> len;  // bytes

  int size() const { return static_cast<int>(off.size()); }
  // `count` elements cut into n near-equal blocks (block_start).
  static Blocks even(size_t count, int n, size_t elem_size) {
    Blocks b;
    for (int i = 0; i < n; ++i) {
      const size_t lo = block_start(count, n, i), hi = block_start(count, n, i + 1);
      b.off.push_back(lo * elem_size);
      b.len.push_back((hi - lo) * elem_size);
    }
    return b;
  }
  // n blocks of `block_bytes` each, one after the other.
  static Blocks uniform(size_t block_bytes, int n) {
    Blocks b;
    for (int i = 0; i < n; ++i) {
      b.off.push_back(static_cast<size_t>(i) * block_bytes);
      b.len.push_back(block_bytes);
    }
    return b;
  }
  // The v-variants' counts and displacements (elements).
  static Blocks of(const size_t *counts, const size_t *displs, int n, size_t elem_size) {
    Blocks b;
    for (int i = 0; i < n; ++i) {
      b.off.push_back(displs[i] * elem_size);
      b.len.push_back(counts[i] * elem_size);
    }
    return b;
  }
};

}  // namespace braid::coll
