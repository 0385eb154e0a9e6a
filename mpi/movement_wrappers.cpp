// MPI_Bcast, MPI_Allgather(v), MPI_Alltoall(v), MPI_Gather, MPI_Scatter, MPI_Barrier: taken
// when the communicator is mirrored, whatever the datatypes: they move as bytes, in place where
// the type map is contiguous without gaps, packed by MPI otherwise (packing.cpp says why).
// MPI_IN_PLACE is mapped onto braid's in-place conventions (the send block inside recvbuf, or
// recvbuf inside the root's sendbuf); where MPI does not allow it the call goes to MPI.
#include <algorithm>
#include <cstddef>
#include <cstdio>
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
  braid_comm_t b = mirror_for(c, comm);
  // Without packing, ranks whose datatypes differ in shape would split between braid and MPI.
  if (b != nullptr && c != Coll::barrier && !pack_is_raw()) {
    note_pass(c, "MPI_Pack does not write plain bytes here");
    return nullptr;
  }
  return b;
}

// Elements of `count` per rank in all `n` blocks.
long long all(int count, int n) {
  return static_cast<long long>(count) * n;
}

int done(Coll c, MPI_Comm comm, braid_result_t rc, const char *call) {
  if (rc != BRAID_SUCCESS) return fail(comm, rc, call);
  count_taken(c);
  return MPI_SUCCESS;
}

constexpr const char *kNotPackable =
    "datatype MPI cannot pack as plain bytes, or a negative count (MPI reports it)";

// MPI_IN_PLACE where this call does not allow it: MPI reports the error (MPI_ERR_BUFFER or
// MPI_ERR_ARG), which the program gets; braid would read or write address 1 (Open MPI's
// MPI_IN_PLACE) or refuse it with another error.
braid_comm_t misused_in_place(Coll c) {
  note_pass(c, "MPI_IN_PLACE where the call does not allow it (MPI reports it)");
  return nullptr;
}

// MPI could not pack or unpack a datatype it accepted when the call was checked: its error.
int type_failed(MPI_Comm comm, const char *call) {
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "[rank %d] braid-mpi error: %s: MPI could not pack the datatype\n", rank,
               call);
  PMPI_Comm_call_errhandler(comm, MPI_ERR_TYPE);
  return MPI_ERR_TYPE;
}

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
  if (b != nullptr && buffer == MPI_IN_PLACE) b = misused_in_place(Coll::bcast);
  if (b != nullptr && valid_root(Coll::bcast, root, b)) {
    const bool is_root = braid_comm_rank(b) == root;
    RecvSide data;  // read at the root, written elsewhere
    if (data.take(buffer, count, datatype, 1)) {
      if (is_root && !data.pack_part(0, count, comm)) return type_failed(comm, "MPI_Bcast");
      const braid_result_t rc = braid_broadcast(data.data, data.bytes, BRAID_UINT8, root, b);
      if (rc == BRAID_SUCCESS && !is_root && !data.finish(comm))
        return type_failed(comm, "MPI_Bcast");
      return done(Coll::bcast, comm, rc, "MPI_Bcast");
    }
    note_pass(Coll::bcast, kNotPackable);
  }
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  braid_comm_t b = taken_comm(Coll::allgather, comm);
  if (b != nullptr && recvbuf == MPI_IN_PLACE) b = misused_in_place(Coll::allgather);
  if (b != nullptr) {
    const int n = braid_comm_size(b), rank = braid_comm_rank(b);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    RecvSide recv;
    SendSide send;
    if (recvcount >= 0 && recv.take(recvbuf, all(recvcount, n), recvtype, 1) &&
        (in_place || send.take(sendbuf, sendcount, sendtype, 0, comm))) {
      const size_t block = recv.bytes / static_cast<size_t>(n);
      if (!in_place && send.bytes != block)
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      if (in_place && !recv.pack_part(all(recvcount, rank), recvcount, comm))
        return type_failed(comm, "MPI_Allgather");
      const char *mine = in_place ? recv.data + static_cast<size_t>(rank) * block : send.data;
      const braid_result_t rc = braid_allgather(mine, recv.data, block, BRAID_UINT8, b);
      if (rc == BRAID_SUCCESS && !recv.finish(comm)) return type_failed(comm, "MPI_Allgather");
      return done(Coll::allgather, comm, rc, "MPI_Allgather");
    }
    note_pass(Coll::allgather, kNotPackable);
  }
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  braid_comm_t b = taken_comm(Coll::allgatherv, comm);
  if (b != nullptr && recvbuf == MPI_IN_PLACE) b = misused_in_place(Coll::allgatherv);
  if (b != nullptr) {
    const int n = braid_comm_size(b), rank = braid_comm_rank(b);
    size_t size = 0;
    std::ptrdiff_t shift = 0;
    VArrays &v = v_arrays(static_cast<size_t>(n));
    const bool in_place = sendbuf == MPI_IN_PLACE;
    SendSide send;
    if (!in_place && (!send.take(sendbuf, sendcount, sendtype, 0, comm))) {
      note_pass(Coll::allgatherv, kNotPackable);
      return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                             comm);
    }
    if (contiguous_bytes(recvtype, 1, &size) &&
        to_bytes(recvcounts, displs, n, size, size, v.a.data(), v.b.data(), &shift)) {
      if (!in_place && send.bytes != v.a[rank])  // erroneous: MPI reports it
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm);
      char *recv = static_cast<char *>(recvbuf) + shift;
      const void *mine = in_place ? recv + v.b[rank] : send.data;
      return done(Coll::allgatherv, comm,
                  braid_allgatherv(mine, v.a[rank], recv, v.a.data(), v.b.data(), BRAID_UINT8, b),
                  "MPI_Allgatherv");
    }
    // A receive type that is not contiguous: the blocks gathered packed, then unpacked.
    if (char *room = blocks_room(recvcounts, n, recvtype, 1, v.a.data(), v.b.data())) {
      if (in_place) {
        const char *packed = nullptr;
        if (!pack_blocks(static_cast<char *>(recvbuf), recvtype, recvcounts + rank, displs + rank,
                         1, 0, comm, &packed, v.c.data(), v.d.data()))
          return type_failed(comm, "MPI_Allgatherv");
        std::memcpy(room + v.b[rank], packed, v.a[rank]);
      } else if (send.bytes != v.a[rank]) {  // erroneous: MPI reports it
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm);
      }
      const void *mine = in_place ? room + v.b[rank] : send.data;
      const braid_result_t rc =
          braid_allgatherv(mine, v.a[rank], room, v.a.data(), v.b.data(), BRAID_UINT8, b);
      if (rc == BRAID_SUCCESS &&
          !unpack_blocks(room, recvbuf, recvtype, recvcounts, displs, v.b.data(), n, comm))
        return type_failed(comm, "MPI_Allgatherv");
      return done(Coll::allgatherv, comm, rc, "MPI_Allgatherv");
    }
    note_pass(Coll::allgatherv, kNotPackable);
  }
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  braid_comm_t b = taken_comm(Coll::alltoall, comm);
  if (b != nullptr && recvbuf == MPI_IN_PLACE) b = misused_in_place(Coll::alltoall);
  if (b != nullptr) {
    const int n = braid_comm_size(b);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    RecvSide recv;
    SendSide send;
    if (recvcount >= 0 && recv.take(recvbuf, all(recvcount, n), recvtype, 1) &&
        (in_place || send.take(sendbuf, all(sendcount, n), sendtype, 0, comm))) {
      const size_t block = recv.bytes / static_cast<size_t>(n);
      if (in_place && !recv.pack_part(0, all(recvcount, n), comm))
        return type_failed(comm, "MPI_Alltoall");
      if (!in_place && send.bytes != recv.bytes)
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      const braid_result_t rc =
          braid_alltoall(in_place ? recv.data : send.data, recv.data, block, BRAID_UINT8, b);
      if (rc == BRAID_SUCCESS && !recv.finish(comm)) return type_failed(comm, "MPI_Alltoall");
      return done(Coll::alltoall, comm, rc, "MPI_Alltoall");
    }
    note_pass(Coll::alltoall, kNotPackable);
  }
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  braid_comm_t b = taken_comm(Coll::alltoallv, comm);
  if (b != nullptr && recvbuf == MPI_IN_PLACE) b = misused_in_place(Coll::alltoallv);
  if (b != nullptr) {
    const int n = braid_comm_size(b);
    size_t ssize = 0, rsize = 0;
    std::ptrdiff_t sshift = 0, rshift = 0;
    VArrays &v = v_arrays(static_cast<size_t>(n));
    // MPI_IN_PLACE is given by every rank of an alltoallv or by none (MPI requires it), and
    // then recvbuf holds the data to send, laid out as it will be received: braid's alltoallv
    // has no in-place form, so the send side is a copy (packed) of those blocks.
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const void *sbuf = in_place ? recvbuf : sendbuf;
    const int *scounts = in_place ? recvcounts : sendcounts;
    const int *sdisp = in_place ? rdispls : sdispls;
    const MPI_Datatype stype = in_place ? recvtype : sendtype;
    // Receive side: in place when contiguous, else into scratch and unpacked after.
    char *recv = nullptr;
    const bool recv_in_place =
        contiguous_bytes(recvtype, 1, &rsize) &&
        to_bytes(recvcounts, rdispls, n, rsize, rsize, v.c.data(), v.d.data(), &rshift);
    if (recv_in_place)
      recv = static_cast<char *>(recvbuf) + rshift;
    else
      recv = blocks_room(recvcounts, n, recvtype, 1, v.c.data(), v.d.data());
    // Send side: in place when contiguous (and not an in-place call), else packed.
    const char *send = nullptr;
    if (!in_place && contiguous_bytes(sendtype, 1, &ssize) &&
        to_bytes(sendcounts, sdispls, n, ssize, ssize, v.a.data(), v.b.data(), &sshift))
      send = static_cast<const char *>(sendbuf) + sshift;
    else if (recv != nullptr &&
             !pack_blocks(sbuf, stype, scounts, sdisp, n, 0, comm, &send, v.a.data(), v.b.data()))
      send = nullptr;  // a negative count or an invalid type: MPI reports it
    if (recv != nullptr && send != nullptr) {
      const braid_result_t rc = braid_alltoallv(send, v.a.data(), v.b.data(), recv, v.c.data(),
                                                v.d.data(), BRAID_UINT8, b);
      if (rc == BRAID_SUCCESS && !recv_in_place &&
          !unpack_blocks(recv, recvbuf, recvtype, recvcounts, rdispls, v.d.data(), n, comm))
        return type_failed(comm, "MPI_Alltoallv");
      return done(Coll::alltoallv, comm, rc, "MPI_Alltoallv");
    }
    note_pass(Coll::alltoallv, kNotPackable);
  }
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  braid_comm_t b = taken_comm(Coll::gather, comm);
  if (b != nullptr && valid_root(Coll::gather, root, b)) {
    const int n = braid_comm_size(b);
    const bool is_root = braid_comm_rank(b) == root;
    // MPI_IN_PLACE is the root's send buffer or nothing.
    if (is_root ? recvbuf == MPI_IN_PLACE : sendbuf == MPI_IN_PLACE) {
      misused_in_place(Coll::gather);
      return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    }
    const bool in_place = is_root && sendbuf == MPI_IN_PLACE;
    RecvSide recv;
    SendSide send;
    // Off the root only the send side counts; at the root the receive side too.
    const bool ok = is_root
                        ? recvcount >= 0 && recv.take(recvbuf, all(recvcount, n), recvtype, 1) &&
                              (in_place || send.take(sendbuf, sendcount, sendtype, 0, comm))
                        : send.take(sendbuf, sendcount, sendtype, 0, comm);
    if (ok) {
      const size_t block = is_root ? recv.bytes / static_cast<size_t>(n) : send.bytes;
      if (is_root && !in_place && send.bytes != block)
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      if (in_place && !recv.pack_part(all(recvcount, root), recvcount, comm))
        return type_failed(comm, "MPI_Gather");
      const char *mine = in_place ? recv.data + static_cast<size_t>(root) * block : send.data;
      const braid_result_t rc =
          braid_gather(mine, is_root ? recv.data : nullptr, block, BRAID_UINT8, root, b);
      if (rc == BRAID_SUCCESS && is_root && !recv.finish(comm))
        return type_failed(comm, "MPI_Gather");
      return done(Coll::gather, comm, rc, "MPI_Gather");
    }
    note_pass(Coll::gather, kNotPackable);
  }
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  braid_comm_t b = taken_comm(Coll::scatter, comm);
  if (b != nullptr && valid_root(Coll::scatter, root, b)) {
    const int n = braid_comm_size(b);
    const bool is_root = braid_comm_rank(b) == root;
    // MPI_IN_PLACE is the root's receive buffer or nothing.
    if (is_root ? sendbuf == MPI_IN_PLACE : recvbuf == MPI_IN_PLACE) {
      misused_in_place(Coll::scatter);
      return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    }
    const bool in_place = is_root && recvbuf == MPI_IN_PLACE;
    SendSide send;
    RecvSide recv;
    const bool ok = is_root ? sendcount >= 0 &&
                                  send.take(sendbuf, all(sendcount, n), sendtype, 0, comm) &&
                                  (in_place || recv.take(recvbuf, recvcount, recvtype, 1))
                            : recv.take(recvbuf, recvcount, recvtype, 1);
    if (ok) {
      const size_t block = is_root ? send.bytes / static_cast<size_t>(n) : recv.bytes;
      if (is_root && !in_place && recv.bytes != block)
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      // In place the root's block stays where it is in sendbuf: braid leaves it alone.
      char *mine =
          in_place ? const_cast<char *>(send.data) + static_cast<size_t>(root) * block : recv.data;
      const braid_result_t rc =
          braid_scatter(is_root ? send.data : nullptr, mine, block, BRAID_UINT8, root, b);
      if (rc == BRAID_SUCCESS && !in_place && !recv.finish(comm))
        return type_failed(comm, "MPI_Scatter");
      return done(Coll::scatter, comm, rc, "MPI_Scatter");
    }
    note_pass(Coll::scatter, kNotPackable);
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
