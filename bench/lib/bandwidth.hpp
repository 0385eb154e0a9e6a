// Bandwidth arithmetic, as nccl-tests defines it. algbw = bytes / time. busbw rescales algbw by
// the data each rank must move at least, so it is comparable across rank counts and with the
// link bandwidth: allreduce 2(n-1)/n (a reduce-scatter plus an allgather), broadcast 1,
// barrier 0 (it moves no payload). GB is 1e9 bytes.
#pragma once

#include <cstddef>

#include "types.hpp"

namespace braid_bench {

double busbw_factor(Collective c, int ranks);
// 0 when seconds <= 0 (nothing measurable).
double algbw_gbps(size_t bytes, double seconds);
double busbw_gbps(Collective c, int ranks, size_t bytes, double seconds);

}  // namespace braid_bench
