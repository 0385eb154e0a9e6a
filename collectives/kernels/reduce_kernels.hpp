// Element-wise reduction of two buffers: the arithmetic core of every reducing collective.
#pragma once

#include <braid/braid.h>

#include <cstddef>

namespace braid::coll {

// dst[i] = op(left[i], right[i]) for i < count.
//
// dst may alias left or right (or both) exactly, i.e. be the same pointer; any other overlap is
// not allowed. The operand order matters for bit-identical results across ranks: callers always
// pass the lower-ranked contribution as `left`.
//
// Semantics per dtype:
//  - integers: sum/prod wrap modulo 2^bits (also for signed types); min/max are exact.
//  - float16/bfloat16: each element is computed in float and rounded to nearest even.
//  - floating min/max: NaN propagates (the left NaN if both are NaN); -0 orders below +0.
//  - avg: summed (see finish_average); band/bor/bxor and land/lor/lxor (0 or 1): integers only.
//
// count 0 is a no-op (the pointers may then be null). An invalid dtype or op throws
// braid::detail::Failure with BRAID_ERR_INVALID_ARGUMENT.
void reduce(void *dst, const void *left, const void *right, size_t count, braid_dtype_t dt,
            braid_op_t op);

// BRAID_AVG is reduced as a sum; this divides the final result by `ranks`, once, where it is
// held: integers truncated toward zero, floats divided in their compute type (float16/bfloat16
// rounded to nearest even).
void finish_average(void *buf, size_t count, braid_dtype_t dt, int ranks);

}  // namespace braid::coll
