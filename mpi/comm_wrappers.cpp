// Communicators derived from a mirrored one by MPI_Comm_dup, MPI_Comm_split and
// MPI_Comm_split_type are mirrored by braid (split with the same members in the same order);
// the braid communicator hangs on the MPI one as an attribute and is freed with it. MPI's other
// dups (MPI_Comm_idup, MPI_Comm_dup_with_info, Fortran's) copy the attribute as a pending
// mirror, made at the communicator's first blocking collective (state.cpp). Any other
// communicator (MPI_Comm_create, topologies, intercommunicators) has no mirror, and its calls go
// to MPI.
#include "interpose.hpp"

namespace braid::mpi {
namespace {

// Attaches `child` to `newcomm` only if every member got one: a member without would pass
// its calls to MPI while the others wait in braid.
void attach_if_all(MPI_Comm newcomm, braid_comm_t child) {
  if (newcomm == MPI_COMM_NULL) {
    if (child != nullptr) braid_comm_free(&child);
    return;
  }
  int mine = child != nullptr, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, newcomm);
  if (!all && child != nullptr) braid_comm_free(&child);
  attach(newcomm, all ? child : nullptr);  // null: MPI_Comm_dup's pending mark goes too
}

// After MPI made `newcomm` from `parent` (collectively): braid splits its mirror the same way.
// The color is the parent rank of the new communicator's rank 0 (one per new communicator),
// the key the new rank, so braid's order is MPI's.
void mirror_split(MPI_Comm parent, MPI_Comm newcomm) {
  braid_comm_t mirror = mirror_of(parent);
  if (mirror == nullptr) return;
  int color = BRAID_UNDEFINED, key = 0;
  if (newcomm != MPI_COMM_NULL) {
    MPI_Group from, to;
    PMPI_Comm_group(newcomm, &from);
    PMPI_Comm_group(parent, &to);
    const int zero = 0;
    PMPI_Group_translate_ranks(from, 1, &zero, to, &color);
    PMPI_Group_free(&from);
    PMPI_Group_free(&to);
    PMPI_Comm_rank(newcomm, &key);
  }
  braid_comm_t child = nullptr;
  if (braid_comm_split(mirror, color, key, &child) != BRAID_SUCCESS) child = nullptr;
  attach_if_all(newcomm, child);
}

}  // namespace
}  // namespace braid::mpi

extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  const int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  if (braid_comm_t mirror = braid::mpi::mirror_of(comm)) {
    braid_comm_t child = nullptr;
    if (braid_comm_dup(mirror, &child) != BRAID_SUCCESS) child = nullptr;
    braid::mpi::attach_if_all(*newcomm, child);
  }
  return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  const int rc = PMPI_Comm_split(comm, color, key, newcomm);
  if (rc == MPI_SUCCESS) braid::mpi::mirror_split(comm, *newcomm);
  return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
  const int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
  if (rc == MPI_SUCCESS) braid::mpi::mirror_split(comm, *newcomm);
  return rc;
}

}  // extern "C"
