/* What the MPI test programs share: the collectives the library counts, and how a test says
 * what it made, why a call went to MPI, what it got (digests) and whether that was right.
 * mpi_collectives.c explains the output lines run_mpi_test.sh reads. */
#ifndef BRAID_MPI_TEST_H
#define BRAID_MPI_TEST_H

#include <mpi.h>
#include <stddef.h>

enum {
  ALLREDUCE,
  BCAST,
  REDUCE,
  ALLGATHER,
  ALLGATHERV,
  REDUCE_SCATTER,
  REDUCE_SCATTER_BLOCK,
  ALLTOALL,
  ALLTOALLV,
  GATHER,
  SCATTER,
  BARRIER,
  IALLREDUCE,
  IBCAST,
  NCOLL
};
extern const char *names[NCOLL];
extern long taken[NCOLL], total[NCOLL];
extern int world_rank, failures;
/* 0 while the calls are on a communicator the library must leave to MPI as a whole. */
extern int comm_taken;

/* One call made; `braid` says whether the library should take it. */
void made(int coll, int braid);
/* A call this rank leaves to MPI for `why` (the first words of what the library logs with
 * BRAID_DEBUG=info): run_mpi_test.sh checks it is logged once. */
void reason(const char *coll, const char *why);
void digest(const char *test, int id, const void *p, size_t n);
void check(int ok, const char *what, int id, int comm_rank);

/* mpi_datatypes.c: data movement with datatypes of every shape, and buffers MPI refuses. */
void datatypes(MPI_Comm comm);
void refused_buffers(MPI_Comm comm);

#endif
