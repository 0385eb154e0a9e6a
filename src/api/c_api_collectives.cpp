// The C entry points of the collectives and of their requests (braid_test, braid_wait).
#include <braid/braid.h>

#include "api/c_api_support.hpp"
#include "api/coll_calls.hpp"

using braid::capi::blocking;
using braid::capi::complete;
using braid::capi::guarded;
using braid::capi::nonblocking;
using braid::capi::request_comm;

extern "C" {

braid_result_t braid_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                               braid_dtype_t dtype, braid_op_t op, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_allreduce(c, sendbuf, recvbuf, count, dtype, op);
  });
}

braid_result_t braid_broadcast(void *buf, size_t count, braid_dtype_t dtype, int root,
                               braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_broadcast(c, buf, count, dtype, root);
  });
}

braid_result_t braid_barrier(braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) { return braid::detail::start_barrier(c); });
}

braid_result_t braid_iallreduce(const void *sendbuf, void *recvbuf, size_t count,
                                braid_dtype_t dtype, braid_op_t op, braid_comm_t comm,
                                braid_request_t *req) {
  return nonblocking("iallreduce", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_allreduce(c, sendbuf, recvbuf, count, dtype, op);
  });
}

braid_result_t braid_ibroadcast(void *buf, size_t count, braid_dtype_t dtype, int root,
                                braid_comm_t comm, braid_request_t *req) {
  return nonblocking("ibroadcast", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_broadcast(c, buf, count, dtype, root);
  });
}

braid_result_t braid_reduce(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                            braid_op_t op, int root, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_reduce(c, sendbuf, recvbuf, count, dtype, op, root);
  });
}
braid_result_t braid_ireduce(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                             braid_op_t op, int root, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("ireduce", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_reduce(c, sendbuf, recvbuf, count, dtype, op, root);
  });
}
braid_result_t braid_allgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                               braid_dtype_t dtype, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_allgather(c, sendbuf, recvbuf, sendcount, dtype);
  });
}
braid_result_t braid_iallgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                braid_dtype_t dtype, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("iallgather", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_allgather(c, sendbuf, recvbuf, sendcount, dtype);
  });
}
braid_result_t braid_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                const size_t *recvcounts, const size_t *displs, braid_dtype_t dtype,
                                braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_allgatherv(c, sendbuf, sendcount, recvbuf, recvcounts, displs,
                                           dtype);
  });
}
braid_result_t braid_iallgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                 const size_t *recvcounts, const size_t *displs,
                                 braid_dtype_t dtype, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("iallgatherv", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_allgatherv(c, sendbuf, sendcount, recvbuf, recvcounts, displs,
                                           dtype);
  });
}
braid_result_t braid_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                    braid_dtype_t dtype, braid_op_t op, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_reduce_scatter(c, sendbuf, recvbuf, recvcount, dtype, op);
  });
}
braid_result_t braid_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                     braid_dtype_t dtype, braid_op_t op, braid_comm_t comm,
                                     braid_request_t *req) {
  return nonblocking("ireduce_scatter", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_reduce_scatter(c, sendbuf, recvbuf, recvcount, dtype, op);
  });
}
braid_result_t braid_alltoall(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                              braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_alltoall(c, sendbuf, recvbuf, count, dtype);
  });
}
braid_result_t braid_ialltoall(const void *sendbuf, void *recvbuf, size_t count,
                               braid_dtype_t dtype, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("ialltoall", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_alltoall(c, sendbuf, recvbuf, count, dtype);
  });
}
braid_result_t braid_alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                               void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                               braid_dtype_t dtype, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_alltoallv(c, sendbuf, sendcounts, sdispls, recvbuf, recvcounts,
                                          rdispls, dtype);
  });
}
braid_result_t braid_ialltoallv(const void *sendbuf, const size_t *sendcounts,
                                const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                const size_t *rdispls, braid_dtype_t dtype, braid_comm_t comm,
                                braid_request_t *req) {
  return nonblocking("ialltoallv", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_alltoallv(c, sendbuf, sendcounts, sdispls, recvbuf, recvcounts,
                                          rdispls, dtype);
  });
}
braid_result_t braid_gather(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                            int root, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_gather(c, sendbuf, recvbuf, count, dtype, root);
  });
}
braid_result_t braid_igather(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                             int root, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("igather", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_gather(c, sendbuf, recvbuf, count, dtype, root);
  });
}
braid_result_t braid_scatter(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                             int root, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_scatter(c, sendbuf, recvbuf, count, dtype, root);
  });
}
braid_result_t braid_iscatter(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                              int root, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("iscatter", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_scatter(c, sendbuf, recvbuf, count, dtype, root);
  });
}
braid_result_t braid_ibarrier(braid_comm_t comm, braid_request_t *req) {
  return nonblocking("ibarrier", comm, req,
                     [&](braid::detail::Comm &c) { return braid::detail::start_barrier(c); });
}

// A request is completed (complete()) under its communicator's claim: another thread's idle
// wait may be progressing that communicator (Process::progress_others), finishing and
// explaining this very collective, and its outcome is read (and the communicator's count of
// open requests changed) only once nobody is.
braid_result_t braid_test(braid_request_t *req, int *done) {
  bool finished = false, completed = false;
  braid_result_t outcome = BRAID_SUCCESS;
  braid_result_t rc = guarded([&] {
    if (req == nullptr || *req == nullptr || done == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_test: NULL request or done");
    braid_request_t r = *req;
    *done = 0;
    braid::detail::Comm *c = request_comm(r);
    if (c == nullptr) {  // its communicator is gone: nothing runs it, its outcome is settled
      finished = true;
      return;
    }
    // A poll does not wait for another thread's call on this communicator: while that thread
    // has it, the request is not done yet, and the next poll looks again.
    braid::detail::Comm::TryUse use(*c);
    if (!use.held()) return;
    if (r->collective && !r->collective->finished()) {
      c->scheduler->progress();
      // As a wait that idles does: a peer may be waiting in another communicator's call
      // before it can serve this one.
      if (!r->collective->finished() && c->process.others_alive()) c->process.progress_others(c);
    }
    finished = !r->collective || r->collective->finished();
    if (finished) {
      *done = 1;
      outcome = complete(req);
      completed = true;
    }
  });
  if (rc != BRAID_SUCCESS || !finished) return rc;
  *done = 1;
  return completed ? outcome : complete(req);
}

braid_result_t braid_wait(braid_request_t *req) {
  bool completed = false;
  braid_result_t outcome = BRAID_SUCCESS;
  braid_result_t rc = guarded([&] {
    if (req == nullptr || *req == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_wait: NULL request");
    braid_request_t r = *req;
    if (braid::detail::Comm *c = request_comm(r)) {
      braid::detail::Comm::Use use(*c);
      if (r->collective) c->scheduler->wait(*r->collective);
      outcome = complete(req);  // under the claim, as in braid_test
      completed = true;
    }
  });
  if (rc != BRAID_SUCCESS) return rc;
  return completed ? outcome : complete(req);
}

}  // extern "C"
