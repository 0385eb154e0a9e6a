/* The MPI test programs' bookkeeping (mpi_test.h). */
#include "mpi_test.h"

#include <stdint.h>
#include <stdio.h>

const char *names[NCOLL] = {"allreduce",
                            "bcast",
                            "reduce",
                            "allgather",
                            "allgatherv",
                            "reduce_scatter",
                            "reduce_scatter_block",
                            "alltoall",
                            "alltoallv",
                            "gather",
                            "scatter",
                            "barrier",
                            "iallreduce",
                            "ibcast"};
long taken[NCOLL], total[NCOLL];
int world_rank, failures;
int comm_taken = 1;

void made(int coll, int braid) {
  total[coll]++;
  if (braid && comm_taken) taken[coll]++;
}

void reason(const char *coll, const char *why) {
  printf("REASON %d %s %s\n", world_rank, coll, why);
}

static uint64_t hash(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

void digest(const char *test, int id, const void *p, size_t n) {
  printf("DIGEST %d %s.%d %016llx\n", world_rank, test, id, (unsigned long long)hash(p, n));
}

void check(int ok, const char *what, int id, int comm_rank) {
  if (ok) return;
  failures++;
  fprintf(stderr, "FAIL rank %d (comm rank %d): %s case %d\n", world_rank, comm_rank, what, id);
}
