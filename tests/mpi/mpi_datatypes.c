/* Data movement with datatypes of every shape, all taken by the library: contiguous ones move
 * as they lie, others are packed. MPI requires only the type signatures to match, so ranks may
 * use types of different shapes in one call; a library that left a rank's call to MPI because
 * of its own type's shape would leave the ranks waiting for each other (the first case).
 * And buffers MPI refuses (MPI_IN_PLACE where a call does not allow it): MPI's own error,
 * compared with a run without the library through the digests. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_test.h"

/* One int every `stride` ints: a receive or send type with gaps. */
static MPI_Datatype strided_int(int stride) {
  MPI_Datatype t;
  MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)(sizeof(int) * (size_t)stride), &t);
  MPI_Type_commit(&t);
  return t;
}

/* Types whose shape differs between ranks for the same signature. */
static void shapes_differ_between_ranks(MPI_Comm comm, int rank, int n) {
  /* Two ints picked by this rank's own indices: packed and in order on rank 0, with a gap on
   * the others. */
  MPI_Datatype pick;
  const int ones[2] = {1, 1}, at[2] = {0, rank == 0 ? 1 : 2};
  MPI_Type_indexed(2, ones, at, MPI_INT, &pick);
  MPI_Type_commit(&pick);
  int src[3] = {rank, 100 + rank, 100 + rank};
  int *all = malloc(sizeof(int) * 2 * (size_t)n);
  MPI_Allgather(src, 1, pick, all, 2, MPI_INT, comm);
  made(ALLGATHER, 1);
  for (int r = 0; r < n; ++r)
    check(all[2 * r] == r && all[2 * r + 1] == 100 + r, "allgather, shapes differ", r, rank);
  digest("dt.allgather_shapes", 0, all, sizeof(int) * 2 * (size_t)n);
  /* The root receives into a type with gaps, the others send plain ints. */
  MPI_Datatype gapped = strided_int(2);
  int *gathered = malloc(sizeof(int) * 2 * (size_t)n);
  for (int i = 0; i < 2 * n; ++i) gathered[i] = -1;
  const int root = n - 1, mine = 10 + rank;
  if (rank == root)
    MPI_Gather(&mine, 1, MPI_INT, gathered, 1, gapped, root, comm);
  else
    MPI_Gather(&mine, 1, MPI_INT, NULL, 0, MPI_INT, root, comm);
  made(GATHER, 1);
  if (rank == root)
    for (int r = 0; r < n; ++r)
      check(gathered[2 * r] == 10 + r && gathered[2 * r + 1] == -1, "gather into gaps", r, rank);
  MPI_Type_free(&gapped);
  MPI_Type_free(&pick);
  free(gathered);
  free(all);
}

static void gaps_and_order(MPI_Comm comm, int rank, int n) {
  /* A vector type with gaps: every other int. */
  MPI_Datatype every_other;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = rank == 0 ? i + 1 : -1;
  MPI_Bcast(buf, 1, every_other, 0, comm);
  made(BCAST, 1);
  for (int i = 0; i < 8; ++i)
    check(buf[i] == (rank == 0 || i % 2 == 0 ? i + 1 : -1), "bcast vector", i, rank);
  MPI_Type_free(&every_other);
  /* Packed but out of order (two ints swapped). */
  MPI_Datatype swapped;
  const int ones[2] = {1, 1}, swap_at[2] = {1, 0};
  MPI_Type_indexed(2, ones, swap_at, MPI_INT, &swapped);
  MPI_Type_commit(&swapped);
  int pair[2] = {rank == 0 ? 5 : -1, rank == 0 ? 6 : -1};
  MPI_Bcast(pair, 1, swapped, 0, comm);
  made(BCAST, 1);
  check(pair[0] == 5 && pair[1] == 6, "bcast swapped type", 0, rank);
  MPI_Allgather(pair, 1, swapped, buf, 2, MPI_INT, comm); /* buf: 8 ints, n <= 4 */
  made(ALLGATHER, 1);
  for (int r = 0; r < n && r < 4; ++r)
    check(buf[2 * r] == 6 && buf[2 * r + 1] == 5, "allgather swapped send type", r, rank);
  MPI_Type_free(&swapped);
  /* A struct of an int and a double with a gap between them. */
  struct pad {
    int i;
    double d;
  } s = {rank == 0 ? 3 : 0, rank == 0 ? 2.5 : 0.0};
  MPI_Datatype padded;
  const int lens[2] = {1, 1};
  const MPI_Aint offs[2] = {offsetof(struct pad, i), offsetof(struct pad, d)};
  const MPI_Datatype parts[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, lens, offs, parts, &padded);
  MPI_Type_commit(&padded);
  MPI_Bcast(&s, 1, padded, 0, comm);
  made(BCAST, 1);
  check(s.i == 3 && s.d == 2.5, "bcast struct with a gap", 0, rank);
  MPI_Type_free(&padded);
}

static void contiguous_derived(MPI_Comm comm, int rank, int n) {
  /* A contiguous derived type. */
  MPI_Datatype three;
  MPI_Type_contiguous(3, MPI_INT, &three);
  MPI_Type_commit(&three);
  int tri[6];
  for (int i = 0; i < 6; ++i) tri[i] = rank == n - 1 ? 40 + i : 0;
  MPI_Bcast(tri, 2, three, n - 1, comm);
  made(BCAST, 1);
  for (int i = 0; i < 6; ++i) check(tri[i] == 40 + i, "bcast contiguous type", i, rank);
  MPI_Type_free(&three);
  /* A subarray that is the whole array, and a contiguous type over an f90 integer type (a
   * predefined part, which must not be freed). */
  MPI_Datatype whole, f90, two_f90;
  const int full[1] = {4}, from[1] = {0};
  MPI_Type_create_subarray(1, full, full, from, MPI_ORDER_C, MPI_INT, &whole);
  MPI_Type_commit(&whole);
  int arr[4];
  for (int i = 0; i < 4; ++i) arr[i] = rank == 0 ? 10 + i : 0;
  MPI_Bcast(arr, 1, whole, 0, comm);
  made(BCAST, 1);
  for (int i = 0; i < 4; ++i) check(arr[i] == 10 + i, "bcast whole subarray", i, rank);
  MPI_Type_free(&whole);
  MPI_Type_create_f90_integer(9, &f90);
  MPI_Type_contiguous(2, f90, &two_f90);
  MPI_Type_commit(&two_f90);
  int pair9[2] = {rank == 0 ? 7 : 0, rank == 0 ? 8 : 0};
  MPI_Bcast(pair9, 1, two_f90, 0, comm);
  made(BCAST, 1);
  check(pair9[0] == 7 && pair9[1] == 8, "bcast contiguous f90 integers", 0, rank);
  MPI_Type_free(&two_f90);
}

/* Every data-movement call with a strided type (one int every other int) on its receive or
 * send side, in place where the call has that form; the gaps must stay as they were. */
static void strided_everywhere(MPI_Comm comm, int rank, int n) {
  MPI_Datatype gap = strided_int(2);
  const size_t un = (size_t)n, room = 4 * un * (un + 1);
  int *send = malloc(sizeof(int) * room), *recv = malloc(sizeof(int) * room);
  int *counts = malloc(sizeof(int) * un), *displs = malloc(sizeof(int) * un);
  for (int in_place = 0; in_place < 2; ++in_place) {
    /* allgather: rank r's value at recv[2r]. */
    for (size_t i = 0; i < room; ++i) recv[i] = -1;
    const int v = 50 + rank;
    if (in_place) recv[2 * rank] = v;
    MPI_Allgather(in_place ? MPI_IN_PLACE : &v, 1, MPI_INT, recv, 1, gap, comm);
    made(ALLGATHER, 1);
    for (int r = 0; r < n; ++r)
      check(recv[2 * r] == 50 + r && recv[2 * r + 1] == -1, "allgather strided", r, rank);
    digest(in_place ? "dt.allgather_strided_ip" : "dt.allgather_strided", 0, recv,
           sizeof(int) * 2 * un);
    /* allgatherv: rank r gives r + 1 values; blocks placed in reverse rank order. */
    int at = 0;
    for (int r = n - 1; r >= 0; --r) {
      counts[r] = r + 1;
      displs[r] = at;
      at += r + 1;
    }
    for (size_t i = 0; i < room; ++i) recv[i] = -1;
    int mine[8];
    for (int i = 0; i <= rank; ++i) mine[i] = 100 * rank + i;
    if (in_place)
      for (int i = 0; i <= rank; ++i) recv[2 * (displs[rank] + i)] = mine[i];
    MPI_Allgatherv(in_place ? MPI_IN_PLACE : mine, rank + 1, MPI_INT, recv, counts, displs, gap,
                   comm);
    made(ALLGATHERV, 1);
    for (int r = 0; r < n; ++r)
      for (int i = 0; i <= r; ++i)
        check(recv[2 * (displs[r] + i)] == 100 * r + i && recv[2 * (displs[r] + i) + 1] == -1,
              "allgatherv strided", r * 10 + i, rank);
    digest(in_place ? "dt.allgatherv_strided_ip" : "dt.allgatherv_strided", 0, recv,
           sizeof(int) * room);
    /* alltoall: rank r sends 1000 * r + d to rank d. */
    for (size_t i = 0; i < room; ++i) recv[i] = send[i] = -1;
    for (int d = 0; d < n; ++d) (in_place ? recv : send)[2 * d] = 1000 * rank + d;
    MPI_Alltoall(in_place ? MPI_IN_PLACE : send, 1, gap, recv, 1, gap, comm);
    made(ALLTOALL, 1);
    for (int s = 0; s < n; ++s)
      check(recv[2 * s] == 1000 * s + rank && recv[2 * s + 1] == -1, "alltoall strided", s, rank);
    /* alltoallv: rank r sends d + 1 values to rank d; in place (where one array gives the counts
     * both ways, so they must be symmetric) (r + d) % 3 + 1. */
    for (size_t i = 0; i < room; ++i) recv[i] = send[i] = -1;
    int *rcounts = malloc(sizeof(int) * un), *rdispls = malloc(sizeof(int) * un);
    at = 0;
    for (int d = 0; d < n; ++d) {
      counts[d] = in_place ? (rank + d) % 3 + 1 : d + 1;
      displs[d] = at;
      at += counts[d];
    }
    at = 0;
    for (int s = 0; s < n; ++s) {
      rcounts[s] = rank + 1;
      rdispls[s] = at;
      at += rank + 1;
    }
    for (int d = 0; d < n; ++d)
      for (int i = 0; i < counts[d]; ++i)
        (in_place ? recv : send)[2 * (displs[d] + i)] = 1000 * rank + 10 * d + i;
    if (in_place)
      MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, recv, counts, displs, gap, comm);
    else
      MPI_Alltoallv(send, counts, displs, gap, recv, rcounts, rdispls, gap, comm);
    made(ALLTOALLV, 1);
    for (int s = 0; s < n; ++s) {
      const int got = in_place ? counts[s] : rcounts[s], base = in_place ? displs[s] : rdispls[s];
      for (int i = 0; i < got; ++i)
        check(recv[2 * (base + i)] == 1000 * s + 10 * rank + i && recv[2 * (base + i) + 1] == -1,
              "alltoallv strided", s * 10 + i, rank);
    }
    free(rcounts);
    free(rdispls);
    /* gather and scatter, the strided side at the root. */
    const int root = n / 2;
    for (size_t i = 0; i < room; ++i) recv[i] = send[i] = -1;
    int val = 7 * rank + 1;
    if (in_place && rank == root) recv[2 * root] = val;
    MPI_Gather(in_place && rank == root ? MPI_IN_PLACE : &val, 1, MPI_INT, recv, 1, gap, root,
               comm);
    made(GATHER, 1);
    if (rank == root)
      for (int r = 0; r < n; ++r)
        check(recv[2 * r] == 7 * r + 1 && recv[2 * r + 1] == -1, "gather strided", r, rank);
    for (int d = 0; d < n; ++d) send[2 * d] = rank == root ? 9 * d + 2 : -1;
    val = -1;
    MPI_Scatter(send, 1, gap, in_place && rank == root ? MPI_IN_PLACE : &val, 1, MPI_INT, root,
                comm);
    made(SCATTER, 1);
    check(in_place && rank == root ? send[2 * root] == 9 * root + 2 : val == 9 * rank + 2,
          "scatter strided", 0, rank);
  }
  free(displs);
  free(counts);
  free(recv);
  free(send);
  MPI_Type_free(&gap);
}

void datatypes(MPI_Comm comm) {
  int rank, n;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  shapes_differ_between_ranks(comm, rank, n);
  gaps_and_order(comm, rank, n);
  contiguous_derived(comm, rank, n);
  strided_everywhere(comm, rank, n);
}

/* The class of MPI's error, as a digest: the run without the library says what MPI gives. */
static void expect_refused(int rc, const char *what, int rank) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  check(rc != MPI_SUCCESS, what, 0, rank);
  digest(what, 0, &cls, sizeof cls);
}

void refused_buffers(MPI_Comm comm) {
  int rank, n;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  /* Some checks report on MPI_COMM_WORLD. */
  MPI_Errhandler was, was_world;
  MPI_Comm_get_errhandler(comm, &was);
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &was_world);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int v[4] = {1, 2, 3, 4}, out[16];
  expect_refused(MPI_Allreduce(v, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm),
                 "refused.allreduce_recv_in_place", rank);
  made(ALLREDUCE, 0);
  if (comm_taken) reason("allreduce", "MPI_IN_PLACE or an aliased buffer");
  expect_refused(MPI_Allreduce(v, v, 4, MPI_INT, MPI_SUM, comm), "refused.allreduce_aliased", rank);
  made(ALLREDUCE, 0);
  /* Not the rooted calls (each rank misusing MPI_IN_PLACE in its own role): MPICH 4.0 does not
   * check those, it reads address -1 and crashes; the library passes them on all the same. */
  expect_refused(MPI_Allgather(v, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, comm), "refused.allgather",
                 rank);
  made(ALLGATHER, 0);
  if (comm_taken) reason("allgather", "MPI_IN_PLACE where the call does not allow it");
  MPI_Comm_set_errhandler(comm, was);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, was_world);
  MPI_Errhandler_free(&was);
  MPI_Errhandler_free(&was_world);
  (void)n;
}
