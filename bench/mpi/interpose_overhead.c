/* The per-call cost of braid's MPI interposition library on its own: MPI_Allreduce of one int
 * on 1 rank, timed over many calls, on MPI_COMM_SELF (never mirrored: the cost of deciding to
 * pass a call through) and on MPI_COMM_WORLD (mirrored: braid's 1-rank allreduce behind the
 * wrapper). Run it without and with the library preloaded; the differences are the layer's:
 *   mpirun.openmpi -np 1 ./braid-mpi-overhead
 *   mpirun.openmpi -np 1 -x LD_PRELOAD=<prefix>/lib/libbraid-mpi-openmpi.so ./braid-mpi-overhead
 * Prints "<communicator> <ns per call>" (best of 5 rounds of 1,000,000 calls). */
#include <mpi.h>
#include <stdio.h>

static double per_call_ns(MPI_Comm comm) {
  const int calls = 1000000;
  double best = 1e30;
  int v = 1, s = 0;
  for (int round = 0; round < 5; ++round) {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < calls; ++i) MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, comm);
    const double ns = (MPI_Wtime() - t0) * 1e9 / calls;
    if (ns < best) best = ns;
  }
  return best;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  printf("MPI_COMM_SELF %.1f\n", per_call_ns(MPI_COMM_SELF));
  printf("MPI_COMM_WORLD %.1f\n", per_call_ns(MPI_COMM_WORLD));
  MPI_Finalize();
  return 0;
}
