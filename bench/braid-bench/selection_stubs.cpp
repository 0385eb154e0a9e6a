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

Task allreduce_recursive_doubling(CollContext &, CollArgs) {
  never_called(__func__);
}
Task allreduce_rabenseifner(CollContext &, CollArgs) {
  never_called(__func__);
}
Task allreduce_ring(CollContext &, CollArgs) {
  never_called(__func__);
}
Task broadcast_binomial(CollContext &, CollArgs) {
  never_called(__func__);
}
Task broadcast_scatter_allgather(CollContext &, CollArgs) {
  never_called(__func__);
}
Task allreduce_shm(CollContext &, CollArgs) {
  never_called(__func__);
}
Task broadcast_shm(CollContext &, CollArgs) {
  never_called(__func__);
}
Task allreduce_hierarchical(CollContext &, CollArgs) {
  never_called(__func__);
}
Task broadcast_hierarchical(CollContext &, CollArgs) {
  never_called(__func__);
}
Task barrier_dissemination(CollContext &, CollArgs) {
  never_called(__func__);
}
Task barrier_shm(CollContext &, CollArgs) {
  never_called(__func__);
}

Task reduce_binomial(CollContext &, CollArgs) {
  never_called(__func__);
}
Task reduce_scatter_gather(CollContext &, CollArgs) {
  never_called(__func__);
}
Task allgather_ring(CollContext &, CollArgs) {
  never_called(__func__);
}
Task allgather_bruck(CollContext &, CollArgs) {
  never_called(__func__);
}
Task allgather_recursive_doubling(CollContext &, CollArgs) {
  never_called(__func__);
}
Task allgatherv_ring(CollContext &, CollArgs) {
  never_called(__func__);
}
Task reduce_scatter_ring(CollContext &, CollArgs) {
  never_called(__func__);
}
Task reduce_scatter_recursive_halving(CollContext &, CollArgs) {
  never_called(__func__);
}
Task alltoall_pairwise(CollContext &, CollArgs) {
  never_called(__func__);
}
Task alltoall_bruck(CollContext &, CollArgs) {
  never_called(__func__);
}
Task alltoallv_pairwise(CollContext &, CollArgs) {
  never_called(__func__);
}
Task gather_binomial(CollContext &, CollArgs) {
  never_called(__func__);
}
Task gather_linear(CollContext &, CollArgs) {
  never_called(__func__);
}
Task scatter_binomial(CollContext &, CollArgs) {
  never_called(__func__);
}
Task scatter_linear(CollContext &, CollArgs) {
  never_called(__func__);
}

}  // namespace braid::coll
