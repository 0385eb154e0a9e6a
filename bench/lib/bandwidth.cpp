#include "bandwidth.hpp"

namespace braid_bench {

double busbw_factor(Collective c, int ranks) {
  if (ranks < 1) return 0.0;
  switch (c) {
    case Collective::allreduce:
      return 2.0 * (ranks - 1) / ranks;
    case Collective::broadcast:
      return 1.0;
    case Collective::barrier:
      return 0.0;
  }
  return 0.0;
}

double algbw_gbps(size_t bytes, double seconds) {
  if (seconds <= 0.0) return 0.0;
  return static_cast<double>(bytes) / seconds / 1e9;
}

double busbw_gbps(Collective c, int ranks, size_t bytes, double seconds) {
  return algbw_gbps(bytes, seconds) * busbw_factor(c, ranks);
}

}  // namespace braid_bench
