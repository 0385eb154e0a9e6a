// Exact checks of reductions, shared by the allreduce and pipeline suites. An expected
// reduction takes every rank's inputs, so computing all of it on every rank costs
// ranks^2 x count across the job (85% of these tests' time at 8 ranks): each rank computes and
// compares its share of the elements, and a broadcast of rank 0's result shows that every rank
// holds the same bits, so every element is still checked.
#pragma once

#include <braid/braid.h>

#include <cstddef>
#include <string>

namespace mp {

// This rank's share [first, last) of `count` elements.
struct Share {
  size_t first, last;
};
Share my_share(size_t count);

// Collective: `got` (count elements of dt) must equal `expected` bit for bit over this rank's
// share, and be the same bytes on every rank. Any difference on any rank is a fatal failure on
// every rank together, so that no rank leaves a test while the others go on to its next call.
// `what` names the call in the message.
void expect_exact_on_every_rank(braid_dtype_t dt, const void *got, const void *expected,
                                size_t count, const Share &share, const std::string &what);

// allreduce of input_value(dt, op, rank, i) over count elements, in place or not: exact, the
// same bits on every rank, and out of place the input left alone.
void check_allreduce(braid_dtype_t dt, braid_op_t op, size_t count, bool in_place);

}  // namespace mp
