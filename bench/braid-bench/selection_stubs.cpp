// Link-time stand-ins for the symbols collectives/selection/selection.cpp refers to, so that
// braid-bench can evaluate braid's selection table without a second copy of the runtime.
//
// selection.cpp's algorithm list holds pointers to the algorithm coroutines; braid-bench only
// reads the names, never calls them (libbraid runs the real ones).
// (kind_name() is compiled from collectives/engine/coll_kind.cpp.)
#include <cstdio>
#include <cstdlib>

#include "allgather/algorithms.hpp"
#include "allreduce/algorithms.hpp"
#include "alltoall/algorithms.hpp"
#include "barrier/barrier.hpp"
#include "broadcast/algorithms.hpp"
#include "gather/algorithms.hpp"
#include "intranode/algorithms.hpp"
#include "intranode/hierarchical_algorithms.hpp"
#include "intranode/shm_algorithms.hpp"
#include "reduce/algorithms.hpp"
#include "reduce_scatter/algorithms.hpp"
#include "scatter/algorithms.hpp"

namespace braid::coll {
namespace {

[[noreturn]] void never_called(const char *what) {
  std::fprintf(stderr, "braid-bench: internal error: %s called outside libbraid\n", what);
  std::abort();
}

}  // namespace

// One line per algorithm in selection.cpp's list (a missing one is a link error).
#define BRAID_STUB(name)               \
  Task name(CollContext &, CollArgs) { \
    never_called(#name);               \
  }
BRAID_STUB(allreduce_recursive_doubling)
BRAID_STUB(allreduce_rabenseifner)
BRAID_STUB(allreduce_ring)
BRAID_STUB(broadcast_binomial)
BRAID_STUB(broadcast_scatter_allgather)
BRAID_STUB(allreduce_shm)
BRAID_STUB(broadcast_shm)
BRAID_STUB(allreduce_hierarchical)
BRAID_STUB(broadcast_hierarchical)
BRAID_STUB(barrier_dissemination)
BRAID_STUB(barrier_shm)
BRAID_STUB(reduce_binomial)
BRAID_STUB(reduce_scatter_gather)
BRAID_STUB(allgather_ring)
BRAID_STUB(allgather_bruck)
BRAID_STUB(allgather_recursive_doubling)
BRAID_STUB(allgatherv_ring)
BRAID_STUB(reduce_scatter_ring)
BRAID_STUB(reduce_scatter_recursive_halving)
BRAID_STUB(alltoall_pairwise)
BRAID_STUB(alltoall_bruck)
BRAID_STUB(alltoallv_pairwise)
BRAID_STUB(gather_binomial)
BRAID_STUB(gather_linear)
BRAID_STUB(scatter_binomial)
BRAID_STUB(scatter_linear)
BRAID_STUB(reduce_shm)
BRAID_STUB(gather_shm)
BRAID_STUB(scatter_shm)
BRAID_STUB(allgather_shm)
BRAID_STUB(allgatherv_shm)
BRAID_STUB(reduce_scatter_shm)
BRAID_STUB(alltoall_shm)
BRAID_STUB(alltoallv_shm)
BRAID_STUB(reduce_hierarchical)
BRAID_STUB(allgather_hierarchical)
BRAID_STUB(barrier_hierarchical)
#undef BRAID_STUB

}  // namespace braid::coll
