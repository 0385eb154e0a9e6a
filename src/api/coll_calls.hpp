// Validation and start of the collectives beyond allreduce, broadcast and barrier (those are in
// comm_object.cpp). Each checks its arguments on the calling rank before anything is sent
// (INVALID_ARGUMENT naming the rank, the collective and the value), handles the one-rank and
// nothing-to-send cases, and returns the running collective or null.
#pragma once

#include <memory>

#include "api/comm_object.hpp"

namespace braid::detail {

std::shared_ptr<coll::Collective> start_reduce(Comm &comm, const void *sendbuf, void *recvbuf,
                                               size_t count, int dtype, int op, int root);
std::shared_ptr<coll::Collective> start_allgather(Comm &comm, const void *sendbuf, void *recvbuf,
                                                  size_t sendcount, int dtype);
std::shared_ptr<coll::Collective> start_allgatherv(Comm &comm, const void *sendbuf,
                                                   size_t sendcount, void *recvbuf,
                                                   const size_t *recvcounts, const size_t *displs,
                                                   int dtype);
std::shared_ptr<coll::Collective> start_reduce_scatter(Comm &comm, const void *sendbuf,
                                                       void *recvbuf, size_t recvcount, int dtype,
                                                       int op);
std::shared_ptr<coll::Collective> start_alltoall(Comm &comm, const void *sendbuf, void *recvbuf,
                                                 size_t count, int dtype);
std::shared_ptr<coll::Collective> start_alltoallv(Comm &comm, const void *sendbuf,
                                                  const size_t *sendcounts, const size_t *sdispls,
                                                  void *recvbuf, const size_t *recvcounts,
                                                  const size_t *rdispls, int dtype);
std::shared_ptr<coll::Collective> start_gather(Comm &comm, const void *sendbuf, void *recvbuf,
                                               size_t count, int dtype, int root);
std::shared_ptr<coll::Collective> start_scatter(Comm &comm, const void *sendbuf, void *recvbuf,
                                                size_t count, int dtype, int root);

}  // namespace braid::detail
