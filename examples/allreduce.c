/* Sum a vector across all ranks, then broadcast a value from rank 0.
 * Run: braidrun -n 4 ./allreduce_c */
#include <braid/braid.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  braid_comm_t world;
  if (braid_init(&argc, &argv, &world) != BRAID_SUCCESS) {
    fprintf(stderr, "braid_init failed: %s\n", braid_last_error());
    return 1;
  }
  int rank = braid_comm_rank(world);
  int size = braid_comm_size(world);

  enum { N = 1 << 20 };
  float *v = malloc(N * sizeof *v);
  for (size_t i = 0; i < N; ++i) v[i] = (float)(rank + 1); /* rank r contributes r+1 */

  braid_result_t rc = braid_allreduce(v, v, N, BRAID_FLOAT32, BRAID_SUM, world); /* in place */
  if (rc != BRAID_SUCCESS) {
    fprintf(stderr, "rank %d: allreduce failed: %s\n", rank, braid_last_error());
    return 1;
  }
  float expected = (float)size * (size + 1) / 2;

  int answer = rank == 0 ? 42 : 0;
  rc = braid_broadcast(&answer, 1, BRAID_INT32, 0, world);
  if (rc != BRAID_SUCCESS) {
    fprintf(stderr, "rank %d: broadcast failed: %s\n", rank, braid_last_error());
    return 1;
  }
  printf("rank %d of %d over %s: sum = %g (expected %g), broadcast = %d\n", rank, size,
         braid_comm_transport(world), v[N - 1], expected, answer);
  int ok = v[0] == expected && v[N - 1] == expected && answer == 42;
  free(v);
  braid_finalize();
  return ok ? 0 : 1;
}
