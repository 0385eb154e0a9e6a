// The MPI interposition library (libbraid-mpi-openmpi.so, libbraid-mpi-mpich.so): MPI_*
// entry points that run a collective on braid when braid can take it and call the PMPI_*
// function otherwise. One source, compiled once per MPI (their handle types differ).
//
// What is taken is decided only from what MPI guarantees to be the same on every rank of the
// communicator (the communicator, the reduction's datatype and op, counts where MPI requires
// them equal), so every rank takes the same calls: a rank in braid and another in MPI would
// wait for each other forever.
#pragma once

#include <braid/braid.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>

// The library's own functions are hidden: only the MPI_* entry points are exported, so the
// wrappers call these directly, not through the PLT (every call the layer passes on pays them).
#pragma GCC visibility push(hidden)
namespace braid::mpi {

// The collectives BRAID_MPI_REPORT counts, in its order.
enum class Coll {
  allreduce,
  bcast,
  reduce,
  allgather,
  allgatherv,
  reduce_scatter,
  reduce_scatter_block,
  alltoall,
  alltoallv,
  gather,
  scatter,
  barrier,
  iallreduce,
  ibcast,
  count_
};
constexpr int kColls = static_cast<int>(Coll::count_);
const char *coll_name(Coll c);

// BRAID_MPI=off, or braid could not form its world: every call goes to MPI.
bool enabled();

// The braid communicator mirroring `comm`, or null when braid does not take it. For a
// communicator MPI duplicated from a mirrored one (MPI_Comm_idup), braid's dup is made here,
// at its first blocking collective: call it only where every member calls it (a blocking
// collective on `comm`, in the same order of checks on every rank).
braid_comm_t mirror_of(MPI_Comm comm);
// mirror_of() for a call of collective `c`; when there is none, the reason is noted
// (note_pass): braid off, an intercommunicator, a communicator braid does not mirror.
braid_comm_t mirror_for(Coll c, MPI_Comm comm);
// Whether `comm` is mirrored or will be, without making anything (non-blocking calls).
bool is_mirrored(MPI_Comm comm);
// Attaches `mine` to `comm` (freed with it); null drops whatever `comm` had (a pending dup).
void attach(MPI_Comm comm, braid_comm_t mine);
void drop_mirror(MPI_Comm comm);

// A call counted as made; taken() counts it as run by braid.
void count_call(Coll c);
void count_taken(Coll c);
// With BRAID_DEBUG=info (or debug), says once per (collective, reason) why a call went to MPI.
void note_pass(Coll c, const char *reason);

// Whether `root` is a rank of `b`; if not the call goes to MPI, which reports the error
// (noted as the reason).
bool valid_root(Coll c, int root, braid_comm_t b);

// braid's dtype for a predefined MPI type braid reduces, or false.
bool reduction_dtype(MPI_Datatype type, braid_dtype_t *out);
// braid's op for a predefined MPI op, or false.
bool reduction_op(MPI_Op op, braid_op_t *out);
// Bytes of `count` elements of `type` when its type map is contiguous without gaps (it can
// move as bytes), or false.
bool contiguous_bytes(MPI_Datatype type, int count, size_t *bytes);
// The extent of `type` in bytes (for displacements), or false.
bool extent_of(MPI_Datatype type, size_t *extent);

// Data movement with datatypes of any shape (packing.cpp): a contiguous side moves in place,
// any other through per-thread scratch (slot 0 or 1: a call's send and receive sides), packed
// by MPI. Counts are elements (long long: a count times the communicator's size). take() is
// false for a negative count or an invalid type (MPI reports those) and when packing fails.
// When MPI_Pack does not write plain bytes (pack_is_raw, checked at start) no data movement is
// taken at all: a rank's datatype alone must never decide whether it takes a call.
void check_pack_format();
bool pack_is_raw();
// count * MPI_Type_size(type), or false.
bool type_bytes(MPI_Datatype type, long long count, size_t *bytes);
struct SendSide {
  const char *data = nullptr;
  size_t bytes = 0;
  bool take(const void *buf, long long count, MPI_Datatype type, int slot, MPI_Comm comm);
};
struct RecvSide {
  char *data = nullptr;
  size_t bytes = 0;
  bool take(void *buf, long long count, MPI_Datatype type, int slot);
  // In-place calls: packs elements [first, first + count) of the user's buffer to their place
  // in `data` before the call (nothing to do when the side is contiguous).
  bool pack_part(long long first, long long count, MPI_Comm comm);
  // Unpacks into the user's buffer after the call.
  bool finish(MPI_Comm comm);

 private:
  void *user_ = nullptr;
  long long count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  bool packed_ = false;
};
// The v-variants: block i is counts[i] elements at displs[i] extents from buf; packed, the
// blocks follow each other in rank order (cbytes[i] long, at dbytes[i]).
bool pack_blocks(const void *buf, MPI_Datatype type, const int *counts, const int *displs, int n,
                 int slot, MPI_Comm comm, const char **data, size_t *cbytes, size_t *dbytes);
char *blocks_room(const int *counts, int n, MPI_Datatype type, int slot, size_t *cbytes,
                  size_t *dbytes);
bool unpack_blocks(const char *data, void *buf, MPI_Datatype type, const int *counts,
                   const int *displs, const size_t *dbytes, int n, MPI_Comm comm);

// A braid failure inside an intercepted call: braid's message on stderr, then the
// communicator's error handler (fatal: aborts; MPI_ERRORS_RETURN: its code is returned).
int fail(MPI_Comm comm, braid_result_t rc, const char *call);

// Starts braid's world on MPI_COMM_WORLD (after PMPI_Init*) and ends it (before
// PMPI_Finalize), printing the report when asked.
void start(int provided);
void stop();

}  // namespace braid::mpi
#pragma GCC visibility pop
