// MPI_Allreduce, MPI_Reduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter: taken when the
// communicator is mirrored and braid has the datatype and the op (MPI requires both to be the
// same on every rank); user ops, MINLOC/MAXLOC, long double and complex go to MPI.
#include <cstring>

#include "interpose.hpp"

namespace braid::mpi {
namespace {

// The braid communicator, dtype and op for a reduction, or null (the reason noted).
braid_comm_t reduction(Coll c, MPI_Comm comm, MPI_Datatype type, MPI_Op op, int count,
                       braid_dtype_t *dt, braid_op_t *bop) {
  count_call(c);
  braid_comm_t b = mirror_for(c, comm);
  if (b == nullptr) return nullptr;
  if (count < 0) {
    note_pass(c, "negative count (MPI reports it)");
    return nullptr;
  }
  if (!reduction_dtype(type, dt)) {
    note_pass(c, "datatype braid does not reduce");
    return nullptr;
  }
  if (!reduction_op(op, bop)) {
    note_pass(c, "op braid does not have (user op, MINLOC, MAXLOC, REPLACE, NO_OP)");
    return nullptr;
  }
  const bool logical = *bop == BRAID_LAND || *bop == BRAID_LOR || *bop == BRAID_LXOR;
  // C bool holds 0 or 1: only the logical ops keep it so.
  if (type == MPI_C_BOOL && !logical) {
    note_pass(c, "MPI_C_BOOL with a non-logical op");
    return nullptr;
  }
  // Bitwise and logical ops on floating types, and logical ops on Fortran's INTEGERs: MPI
  // defines none of them and reports MPI_ERR_OP, which is what the program should get.
  const bool floating =
      *dt == BRAID_FLOAT16 || *dt == BRAID_BFLOAT16 || *dt == BRAID_FLOAT32 || *dt == BRAID_FLOAT64;
  if ((floating && (logical || *bop == BRAID_BAND || *bop == BRAID_BOR || *bop == BRAID_BXOR)) ||
      (logical && (type == MPI_INTEGER || type == MPI_INTEGER1 || type == MPI_INTEGER2 ||
                   type == MPI_INTEGER4 || type == MPI_INTEGER8))) {
    note_pass(c, "op MPI does not define on this datatype (MPI reports it)");
    return nullptr;
  }
  // On one rank MPI copies the input whatever the op, where braid's logical ops give 0 or 1:
  // MAX of one value is the value.
  if (logical && braid_comm_size(b) == 1) *bop = BRAID_MAX;
  return b;
}

// MPI_IN_PLACE where the call does not allow it, or the receive buffer given as the send
// buffer too: MPI refuses both (MPI_ERR_BUFFER, MPI_ERR_ARG), and the program gets that error.
// braid would read or write address 1 (Open MPI's MPI_IN_PLACE), or refuse with another error.
braid_comm_t unless_misused(Coll c, braid_comm_t b, bool misused) {
  if (b == nullptr || !misused) return b;
  note_pass(c,
            "MPI_IN_PLACE or an aliased buffer where the call does not allow it (MPI reports it)");
  return nullptr;
}

// MPI's in-place reduce-scatter keeps the input in recvbuf and leaves the result at its start;
// braid's wants recvbuf at this rank's block of the input: run it there, then move the block.
int reduce_scatter_block(Coll c, const void *sendbuf, void *recvbuf, int recvcount,
                         MPI_Datatype type, MPI_Op op, MPI_Comm comm, const char *call) {
  braid_dtype_t dt;
  braid_op_t bop;
  braid_comm_t b = unless_misused(c, reduction(c, comm, type, op, recvcount, &dt, &bop),
                                  recvbuf == MPI_IN_PLACE);
  if (b == nullptr) return -1;
  int type_size = 0;  // braid's dtype for `type` has its size
  PMPI_Type_size(type, &type_size);
  const size_t block = static_cast<size_t>(recvcount) * static_cast<size_t>(type_size);
  const int rank = braid_comm_rank(b);
  braid_result_t rc;
  if (sendbuf == MPI_IN_PLACE) {
    char *mine = static_cast<char *>(recvbuf) + static_cast<size_t>(rank) * block;
    rc = braid_reduce_scatter(recvbuf, mine, static_cast<size_t>(recvcount), dt, bop, b);
    if (rc == BRAID_SUCCESS && rank != 0) std::memmove(recvbuf, mine, block);
  } else {
    rc = braid_reduce_scatter(sendbuf, recvbuf, static_cast<size_t>(recvcount), dt, bop, b);
  }
  if (rc != BRAID_SUCCESS) return fail(comm, rc, call);
  count_taken(c);
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace braid::mpi

using namespace braid::mpi;

extern "C" {

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  braid_dtype_t dt;
  braid_op_t bop;
  if (braid_comm_t b = unless_misused(
          Coll::allreduce, reduction(Coll::allreduce, comm, datatype, op, count, &dt, &bop),
          recvbuf == MPI_IN_PLACE || (sendbuf == recvbuf && count > 0))) {
    const void *send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    const braid_result_t rc =
        braid_allreduce(send, recvbuf, static_cast<size_t>(count), dt, bop, b);
    if (rc != BRAID_SUCCESS) return fail(comm, rc, "MPI_Allreduce");
    count_taken(Coll::allreduce);
    return MPI_SUCCESS;
  }
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  braid_dtype_t dt;
  braid_op_t bop;
  braid_comm_t b = reduction(Coll::reduce, comm, datatype, op, count, &dt, &bop);
  if (b != nullptr && !valid_root(Coll::reduce, root, b)) b = nullptr;
  if (b != nullptr) {
    const bool is_root = braid_comm_rank(b) == root;
    b = unless_misused(Coll::reduce, b,
                       is_root ? recvbuf == MPI_IN_PLACE : sendbuf == MPI_IN_PLACE);
  }
  if (b != nullptr) {
    const bool is_root = braid_comm_rank(b) == root;
    const void *send = is_root && sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    const braid_result_t rc = braid_reduce(send, is_root ? recvbuf : nullptr,
                                           static_cast<size_t>(count), dt, bop, root, b);
    if (rc != BRAID_SUCCESS) return fail(comm, rc, "MPI_Reduce");
    count_taken(Coll::reduce);
    return MPI_SUCCESS;
  }
  return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const int rc = reduce_scatter_block(Coll::reduce_scatter_block, sendbuf, recvbuf, recvcount,
                                      datatype, op, comm, "MPI_Reduce_scatter_block");
  if (rc >= 0) return rc;
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

// braid's reduce-scatter gives every rank the same count: taken when recvcounts (the same
// array on every rank) are all equal.
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (braid_comm_t b = mirror_for(Coll::reduce_scatter, comm)) {
    bool equal = true;
    for (int r = 1; r < braid_comm_size(b); ++r) equal = equal && recvcounts[r] == recvcounts[0];
    if (equal) {
      const int rc = reduce_scatter_block(Coll::reduce_scatter, sendbuf, recvbuf, recvcounts[0],
                                          datatype, op, comm, "MPI_Reduce_scatter");
      if (rc >= 0) return rc;
      return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    }
    note_pass(Coll::reduce_scatter, "recvcounts differ between ranks");
  }
  count_call(Coll::reduce_scatter);
  return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

}  // extern "C"
