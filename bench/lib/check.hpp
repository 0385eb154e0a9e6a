// --check: deterministic per-rank inputs whose results are exact in every dtype, the expected
// result computed locally, and counting wrong elements.
//
// Every input is a small non-negative integer chosen so that the reduction over all ranks is an
// integer the dtype represents exactly (float16 up to 2048, bfloat16 up to 256, int8 up to
// 127), so the result has exactly one correct bit pattern and is compared bit for bit:
//   sum        (i + rank) % r, with r (at most 4) small enough that (r-1)*ranks fits, and
//              rank 0 adds i % q (q odd, 97 where the dtype leaves room)
//   prod       1, except rank i % (ranks+1) contributes 2 or 3: every product is 1, 2 or 3
//   min, max   (7i + 3 rank) % 11 + i % 97
// Each result has a term of odd period, so no two blocks of a power-of-two size hold the same
// values: a block delivered to the wrong place is counted as wrong.
//   broadcast  the root holds (5i + root + 1) % 101
#pragma once

#include <cstddef>
#include <cstdint>

#include "types.hpp"

namespace braid_bench {

// What `rank` contributes as element i (for broadcast: what the root holds).
int64_t input_value(Collective c, Op op, Dtype d, int rank, int ranks, int root, size_t i);
// The correct result at element i on every rank.
int64_t expected_value(Collective c, Op op, Dtype d, int ranks, int root, size_t i);

// Stores the small integer v as element i of a buffer of dtype d (exact for |v| <= 2048 in
// float16, <= 256 in bfloat16, and within the type's range for the integer types).
void store_value(Dtype d, void *buf, size_t i, int64_t v);

// The input buffer of `rank` for one call (broadcast: non-root ranks get poison()).
void fill_input(Collective c, Op op, Dtype d, int rank, int ranks, int root, void *buf,
                size_t count);
void fill_expected(Collective c, Op op, Dtype d, int ranks, int root, void *buf, size_t count);
// All-ones bytes (NaN for floats, -1 / max for integers): a value no check ever expects, so an
// element the collective failed to write is counted as wrong.
void poison(void *buf, size_t bytes);

// The rest of the set. `count` is the call's count (one rank's block; reduce: the vector).
// Reductions use the allreduce inputs above over the whole send buffer; data movement uses
// (5i + 7 block + 3 owner + 1) % 101 for element i of `owner`'s block `block`.
size_t send_elements(Collective c, int ranks, size_t count);
size_t recv_elements(Collective c, int ranks, size_t count);
// Fills `rank`'s whole send buffer (scatter off the root: nothing to fill).
void fill_send(Collective c, Op op, Dtype d, int rank, int ranks, int root, void *buf,
               size_t count);
// What `rank`'s receive buffer must hold after the call; false where nothing is received
// (reduce and gather off the root).
bool fill_expected_recv(Collective c, Op op, Dtype d, int rank, int ranks, int root, void *buf,
                        size_t count);

// Number of elements of `actual` whose bytes differ from `expected`.
uint64_t count_wrong(const void *expected, const void *actual, Dtype d, size_t count);

}  // namespace braid_bench
