// MPI_Bcast, MPI_Allgather(v), MPI_Alltoall(v), MPI_Gather, MPI_Scatter, MPI_Barrier: taken
// when the communicator is mirrored and the datatypes' type maps are contiguous without gaps
// (they move as bytes); other datatypes go to MPI. MPI_IN_PLACE is mapped onto braid's
// in-place conventions (the send block inside recvbuf, or recvbuf inside the root's sendbuf).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "interpose.hpp"

namespace braid::mpi {
namespace {

// Per-thread room for the v-variants' counts and displacements in bytes.
struct VArrays {
  std::vector<size_t> a, b, c, d;
};
VArrays &v_arrays(size_t n) {
  thread_local VArrays v;
  v.a.resize(n);
  v.b.resize(n);
  v.c.resize(n);
  v.d.resize(n);
  return v;
}

// counts[i] * size and displs[i] * extent in bytes, the displacements from the lowest one
// where that is below 0, and *shift (<= 0): where that lowest one is from the buffer, in bytes.
// A negative displacement is legal (it is this rank's own business where its blocks lie):
// refusing it made this rank alone leave the call to MPI while the others waited in braid.
// False for a negative count.
bool to_bytes(const int *counts, const int *displs, int n, size_t size, size_t extent,
              size_t *cbytes, size_t *dbytes, std::ptrdiff_t *shift) {
  long long lowest = 0;
  for (int i = 0; i < n; ++i) {
    if (counts[i] < 0) return false;
    if (counts[i] > 0) lowest = std::min<long long>(lowest, displs[i]);
  }
  for (int i = 0; i < n; ++i) {
    cbytes[i] = static_cast<size_t>(counts[i]) * size;
    // A block of nothing may say anything: it is not read or written.
    dbytes[i] = counts[i] > 0 ? static_cast<size_t>(displs[i] - lowest) * extent : 0;
  }
  *shift = static_cast<std::ptrdiff_t>(lowest) * static_cast<std::ptrdiff_t>(extent);
  return true;
}

braid_comm_t taken_comm(Coll c, MPI_Comm comm) {
  count_call(c);
  return mirror_for(c, comm);
}

int done(Coll c, MPI_Comm comm, braid_result_t rc, const char *call) {
  if (rc != BRAID_SUCCESS) return fail(comm, rc, call);
  count_taken(c);
  return MPI_SUCCESS;
}

constexpr const char *kNotContiguous =
    "datatype with gaps, an offset or out of order (not contiguous)";

}  // namespace
}  // namespace braid::mpi

using namespace braid::mpi;

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
  if (braid_comm_t b = taken_comm(Coll::barrier, comm))
    return done(Coll::barrier, comm, braid_barrier(b), "MPI_Barrier");
  return PMPI_Barrier(comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  braid_comm_t b = taken_comm(Coll::bcast, comm);
  if (b != nullptr && valid_root(Coll::bcast, root, b)) {
    size_t bytes = 0;
    if (contiguous_bytes(datatype, count, &bytes))
      return done(Coll::bcast, comm, braid_broadcast(buffer, bytes, BRAID_UINT8, root, b),
                  "MPI_Bcast");
    note_pass(Coll::bcast, kNotContiguous);
  }
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (braid_comm_t b = taken_comm(Coll::allgather, comm)) {
    size_t block = 0, sent = 0;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (contiguous_bytes(recvtype, recvcount, &block) &&
        (in_place || (contiguous_bytes(sendtype, sendcount, &sent) && sent == block))) {
      const int rank = braid_comm_rank(b);
      const void *send =
          in_place ? static_cast<char *>(recvbuf) + static_cast<size_t>(rank) * block : sendbuf;
      return done(Coll::allgather, comm, braid_allgather(send, recvbuf, block, BRAID_UINT8, b),
                  "MPI_Allgather");
    }
    note_pass(Coll::allgather, kNotContiguous);
  }
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  if (braid_comm_t b = taken_comm(Coll::allgatherv, comm)) {
    const int n = braid_comm_size(b), rank = braid_comm_rank(b);
    size_t size = 0, sent = 0;
    std::ptrdiff_t shift = 0;
    VArrays &v = v_arrays(static_cast<size_t>(n));
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (contiguous_bytes(recvtype, 1, &size) &&
        to_bytes(recvcounts, displs, n, size, size, v.a.data(), v.b.data(), &shift) &&
        (in_place || (contiguous_bytes(sendtype, sendcount, &sent) && sent == v.a[rank]))) {
      char *recv = static_cast<char *>(recvbuf) + shift;
      const void *send = in_place ? recv + v.b[rank] : sendbuf;
      return done(Coll::allgatherv, comm,
                  braid_allgatherv(send, v.a[rank], recv, v.a.data(), v.b.data(), BRAID_UINT8, b),
                  "MPI_Allgatherv");
    }
    note_pass(Coll::allgatherv, kNotContiguous);
  }
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (braid_comm_t b = taken_comm(Coll::alltoall, comm)) {
    size_t block = 0, sent = 0;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (contiguous_bytes(recvtype, recvcount, &block) &&
        (in_place || (contiguous_bytes(sendtype, sendcount, &sent) && sent == block))) {
      const void *send = in_place ? recvbuf : sendbuf;
      return done(Coll::alltoall, comm, braid_alltoall(send, recvbuf, block, BRAID_UINT8, b),
                  "MPI_Alltoall");
    }
    note_pass(Coll::alltoall, kNotContiguous);
  }
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  if (braid_comm_t b = taken_comm(Coll::alltoallv, comm)) {
    const int n = braid_comm_size(b);
    size_t ssize = 0, rsize = 0;
    std::ptrdiff_t sshift = 0, rshift = 0;
    VArrays &v = v_arrays(static_cast<size_t>(n));
    // MPI_IN_PLACE is given by every rank of an alltoallv or by none (MPI requires it), and
    // then recvbuf holds the data to send, laid out as it will be received: braid's alltoallv
    // has no in-place form, so the send side is a copy of that span.
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (contiguous_bytes(recvtype, 1, &rsize) &&
        to_bytes(recvcounts, rdispls, n, rsize, rsize, v.c.data(), v.d.data(), &rshift) &&
        (in_place ||
         (contiguous_bytes(sendtype, 1, &ssize) &&
          to_bytes(sendcounts, sdispls, n, ssize, ssize, v.a.data(), v.b.data(), &sshift)))) {
      char *recv = static_cast<char *>(recvbuf) + rshift;
      const void *send = in_place ? nullptr : static_cast<const char *>(sendbuf) + sshift;
      if (in_place) {
        size_t span = 0;
        for (int i = 0; i < n; ++i) span = std::max(span, v.d[i] + v.c[i]);
        thread_local std::vector<char> copy;
        copy.resize(std::max<size_t>(span, 1));
        if (span > 0) std::memcpy(copy.data(), recv, span);
        v.a = v.c;
        v.b = v.d;
        send = copy.data();
      }
      return done(Coll::alltoallv, comm,
                  braid_alltoallv(send, v.a.data(), v.b.data(), recv, v.c.data(), v.d.data(),
                                  BRAID_UINT8, b),
                  "MPI_Alltoallv");
    }
    note_pass(Coll::alltoallv, kNotContiguous);
  }
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  braid_comm_t b = taken_comm(Coll::gather, comm);
  if (b != nullptr && valid_root(Coll::gather, root, b)) {
    const bool is_root = braid_comm_rank(b) == root, in_place = is_root && sendbuf == MPI_IN_PLACE;
    size_t block = 0, sent = 0;
    // Off the root only the send side counts; at the root the receive side too.
    const bool ok =
        (is_root ? contiguous_bytes(recvtype, recvcount, &block) &&
                       (in_place || (contiguous_bytes(sendtype, sendcount, &sent) && sent == block))
                 : contiguous_bytes(sendtype, sendcount, &block));
    if (ok) {
      const void *send =
          in_place ? static_cast<char *>(recvbuf) + static_cast<size_t>(root) * block : sendbuf;
      return done(Coll::gather, comm,
                  braid_gather(send, is_root ? recvbuf : nullptr, block, BRAID_UINT8, root, b),
                  "MPI_Gather");
    }
    note_pass(Coll::gather, kNotContiguous);
  }
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  braid_comm_t b = taken_comm(Coll::scatter, comm);
  if (b != nullptr && valid_root(Coll::scatter, root, b)) {
    const bool is_root = braid_comm_rank(b) == root, in_place = is_root && recvbuf == MPI_IN_PLACE;
    size_t block = 0, got = 0;
    const bool ok =
        (is_root ? contiguous_bytes(sendtype, sendcount, &block) &&
                       (in_place || (contiguous_bytes(recvtype, recvcount, &got) && got == block))
                 : contiguous_bytes(recvtype, recvcount, &block));
    if (ok) {
      void *recv = in_place ? static_cast<char *>(const_cast<void *>(sendbuf)) +
                                  static_cast<size_t>(root) * block
                            : recvbuf;
      return done(Coll::scatter, comm,
                  braid_scatter(is_root ? sendbuf : nullptr, recv, block, BRAID_UINT8, root, b),
                  "MPI_Scatter");
    }
    note_pass(Coll::scatter, kNotContiguous);
  }
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

// Non-blocking collectives go to MPI until completion through every MPI_Wait*/MPI_Test* form
// and MPI_Request_free is handled; they are counted for the report.
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request) {
  count_call(Coll::iallreduce);
  if (is_mirrored(comm)) note_pass(Coll::iallreduce, "non-blocking (not taken yet)");
  return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request) {
  count_call(Coll::ibcast);
  if (is_mirrored(comm)) note_pass(Coll::ibcast, "non-blocking (not taken yet)");
  return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
}

}  // extern "C"
