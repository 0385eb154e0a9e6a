#include "bandwidth.hpp"

namespace braid_bench {

double busbw_factor(Collective c, int ranks) {
  if (ranks < 1) return 0.0;
  switch (c) {
    case Collective::allreduce:
      return 2.0 * (ranks - 1) / ranks;
    case Collective::broadcast:
    case Collective::reduce:
      return 1.0;
    case Collective::barrier:
      return 0.0;
    case Collective::allgather:
    case Collective::allgatherv:
    case Collective::reduce_scatter:
    case Collective::alltoall:
    case Collective::alltoallv:
    case Collective::gather:
    case Collective::scatter:
      return static_cast<double>(ranks - 1) / ranks;
  }
  return 0.0;
}

size_t algbw_bytes(Collective c, int ranks, size_t bytes) {
  switch (c) {
    case Collective::allreduce:
    case Collective::broadcast:
    case Collective::reduce:
    case Collective::barrier:
      return bytes;
    default:
      return bytes * static_cast<size_t>(ranks > 0 ? ranks : 1);
  }
}

double algbw_gbps(size_t bytes, double seconds) {
  if (seconds <= 0.0) return 0.0;
  return static_cast<double>(bytes) / seconds / 1e9;
}

double busbw_gbps(Collective c, int ranks, size_t bytes, double seconds) {
  return algbw_gbps(algbw_bytes(c, ranks, bytes), seconds) * busbw_factor(c, ranks);
}

}  // namespace braid_bench
