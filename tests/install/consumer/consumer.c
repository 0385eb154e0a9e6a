/* Install-test consumer (C): allreduce + broadcast through the installed libbraid, checking
 * every element. Exits non-zero on a wrong result or any failure. */
#include <braid/braid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    braid_result_t rc_ = (call);                                                             \
    if (rc_ != BRAID_SUCCESS) {                                                              \
      fprintf(stderr, "consumer_c: %s failed: %s: %s\n", #call, braid_strerror(rc_),         \
              braid_last_error());                                                           \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

int main(int argc, char **argv) {
  braid_comm_t world;
  CHECK(braid_init(&argc, &argv, &world));
  const int rank = braid_comm_rank(world);
  const int size = braid_comm_size(world);
  if (rank < 0 || size < 1 || rank >= size) {
    fprintf(stderr, "consumer_c: bad rank %d / size %d\n", rank, size);
    return 1;
  }
  int bad = 0;

  /* Allreduce (in place): element i of rank r is r + i, so the sum is size*i + size(size-1)/2. */
  enum { N = 100003 };
  int64_t *v = malloc(N * sizeof *v);
  if (v == NULL) return 1;
  for (int64_t i = 0; i < N; ++i) v[i] = rank + i;
  CHECK(braid_allreduce(v, v, N, BRAID_INT64, BRAID_SUM, world));
  for (int64_t i = 0; i < N; ++i) {
    int64_t expected = (int64_t)size * i + (int64_t)size * (size - 1) / 2;
    if (v[i] != expected) {
      if (bad++ < 5)
        fprintf(stderr, "consumer_c: rank %d: allreduce[%lld] = %lld, expected %lld\n", rank,
                (long long)i, (long long)v[i], (long long)expected);
    }
  }

  /* Out-of-place float max. */
  float in[3] = {(float)rank, -(float)rank, 0.5f}, out[3] = {0};
  CHECK(braid_allreduce(in, out, 3, BRAID_FLOAT32, BRAID_MAX, world));
  if (out[0] != (float)(size - 1) || out[1] != 0.0f || out[2] != 0.5f) {
    fprintf(stderr, "consumer_c: rank %d: max = {%g, %g, %g}\n", rank, out[0], out[1], out[2]);
    ++bad;
  }

  /* Broadcast from the last rank. */
  const int root = size - 1;
  char msg[32];
  memset(msg, 0, sizeof msg);
  if (rank == root) snprintf(msg, sizeof msg, "hello from rank %d", root);
  CHECK(braid_broadcast(msg, sizeof msg, BRAID_UINT8, root, world));
  char want[32];
  memset(want, 0, sizeof want);
  snprintf(want, sizeof want, "hello from rank %d", root);
  if (memcmp(msg, want, sizeof msg) != 0) {
    fprintf(stderr, "consumer_c: rank %d: broadcast gave '%.31s'\n", rank, msg);
    ++bad;
  }
  CHECK(braid_barrier(world));

  printf("consumer_c: rank %d of %d over %s: %s\n", rank, size, braid_comm_transport(world),
         bad ? "WRONG" : "ok");
  free(v);
  CHECK(braid_finalize());
  return bad ? 1 : 0;
}
