// The alltoall algorithms: block j of rank i's sendbuf becomes block i of rank j's recvbuf.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task alltoall_pairwise(CollContext &ctx, CollArgs args);
Task alltoall_bruck(CollContext &ctx, CollArgs args);
// alltoallv: sizes and places from counts/displs (send) and recv_counts/recv_displs.
Task alltoallv_pairwise(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
