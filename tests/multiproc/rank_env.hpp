// Shared fixture for tests that run as every rank of a braidrun job: one braid world per
// process, deterministic per-rank data, and a check that all ranks hold identical bytes.
#pragma once

#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace mp {

braid_comm_t world();
int rank();
int size();

// True when every rank passed the same bytes (compares against rank 0's via broadcast).
bool identical_on_all_ranks(const void *data, size_t bytes);

// Element i of rank r's input for `op`, as a small integer so that sums and products are exact
// in every dtype (including float16/bfloat16) and the expected result is unambiguous.
int64_t input_value(braid_dtype_t dt, braid_op_t op, int r, size_t i);
// Stores v (a small integer) as element i of a buffer of dtype dt.
void store(braid_dtype_t dt, void *buf, size_t i, int64_t v);
// Loads element i as a double (exact for the small integers used here).
double load(braid_dtype_t dt, const void *buf, size_t i);
size_t elem_size(braid_dtype_t dt);
const char *dtype_str(braid_dtype_t dt);
const char *op_str(braid_op_t op);

// Whether every rank runs on this host (collective over the world).
bool all_on_one_host();
// Whether this run's automatic selection takes the single-node shared-memory algorithm of the
// kind whose override is `algo_var` (collective over the world).
bool shm_selected(const char *algo_var);

constexpr braid_dtype_t kAllDtypes[] = {
    BRAID_INT8,  BRAID_UINT8,  BRAID_INT16,   BRAID_UINT16,   BRAID_INT32,   BRAID_UINT32,
    BRAID_INT64, BRAID_UINT64, BRAID_FLOAT16, BRAID_BFLOAT16, BRAID_FLOAT32, BRAID_FLOAT64};
// Every dtype but the 16-bit integers, for the heaviest sweeps (the 16-bit integers go through
// the same kernels and algorithms, and have sweeps of their own).
constexpr braid_dtype_t kSweepDtypes[] = {
    BRAID_INT8,   BRAID_UINT8,   BRAID_INT32,    BRAID_UINT32,  BRAID_INT64,
    BRAID_UINT64, BRAID_FLOAT16, BRAID_BFLOAT16, BRAID_FLOAT32, BRAID_FLOAT64};
// The ops every dtype has.
constexpr braid_op_t kAllOps[] = {BRAID_SUM, BRAID_PROD, BRAID_MIN, BRAID_MAX};
// The ops of integer dtypes only, and AVG (whose expected value needs a division).
constexpr braid_op_t kIntegerOps[] = {BRAID_BAND, BRAID_BOR, BRAID_BXOR,
                                      BRAID_LAND, BRAID_LOR, BRAID_LXOR};
bool is_integer(braid_dtype_t dt);
// The reference for op over two values as the kernels define it (sum/prod wrap, logical ops
// give 0 or 1); AVG is SUM here (the division comes last).
int64_t combine(braid_op_t op, int64_t a, int64_t b);
// What one contribution reduces to (a one-rank communicator's result): the logical ops give
// 0 or 1 there too, every other op the value itself.
int64_t alone(braid_op_t op, int64_t v);

}  // namespace mp
