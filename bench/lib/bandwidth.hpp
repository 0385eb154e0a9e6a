// Bandwidth arithmetic, as nccl-tests defines it. algbw = bytes / time, where bytes is the
// collective's whole buffer: the vector (allreduce, broadcast, reduce) or all n blocks
// (allgather(v), reduce_scatter, alltoall(v), gather, scatter, whose size column is one rank's
// block). busbw rescales algbw by the data each rank must move at least, so it is comparable
// across rank counts and with the link bandwidth: allreduce 2(n-1)/n (a reduce-scatter plus an
// allgather), the block collectives (n-1)/n, broadcast and reduce 1, barrier 0 (it moves no
// payload). GB is 1e9 bytes.
#pragma once

#include <cstddef>

#include "types.hpp"

namespace braid_bench {

double busbw_factor(Collective c, int ranks);
// The bytes algbw counts for a row of `bytes` (see above).
size_t algbw_bytes(Collective c, int ranks, size_t bytes);
// 0 when seconds <= 0 (nothing measurable).
double algbw_gbps(size_t bytes, double seconds);
double busbw_gbps(Collective c, int ranks, size_t bytes, double seconds);

}  // namespace braid_bench
