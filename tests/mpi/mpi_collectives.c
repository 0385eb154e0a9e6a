/* An ordinary MPI program (no braid in it): every collective the interposition library takes,
 * on MPI_COMM_WORLD, a dup, a split with reversed keys, the rows and columns of a grid, a
 * split_type and dups freed in a loop,
 * MPI_Comm_idup (of a split, of an idup whose parent is freed first) and MPI_Comm_dup_with_info,
 * in place and not, with results checked against values computed locally (integers, exact in
 * every type). Calls braid must leave to MPI are made too: a user op, MINLOC, a vector type, an
 * intercommunicator, reduce_scatter with unequal counts, the non-blocking ones.
 *
 * Output: every rank prints "EXPECT <rank> <name> <taken> <total>" for every collective (what
 * a library that takes every call it should takes on this rank), and
 * "DIGEST <rank> <test> <hash>" lines of its results; tests/mpi/run_mpi_test.sh compares the
 * digests with a run under BRAID_MPI=off and the EXPECT lines with the library's report.
 * With MPI_TEST_OUT set (a directory), each rank writes those lines to its own file there: the
 * launchers forward the ranks' stdout in chunks that can end mid-line, so lines of two ranks
 * sharing one stream can be spliced together.
 * MPI_TEST_THREAD_LEVEL starts it with MPI_Init_thread; MPI_TEST_ERRORS runs the error handler
 * case instead (errors() below).
 * Exit status 1 when a result is wrong. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_test.h"

/* Element i of rank r's input: small integers, exact in every type and every op here. */
static int value(int r, int i) { return (r * 7 + i * 3) % 11 + 1; }

struct type_case {
  MPI_Datatype type;
  size_t size;
  int is_float;
  int is_bool; /* MPI_C_BOOL: values 0 and 1, logical ops only */
};

static void store(struct type_case t, void *buf, int i, long v) {
  switch (t.size) {
    case 1: ((int8_t *)buf)[i] = (int8_t)v; break;
    case 2: ((int16_t *)buf)[i] = (int16_t)v; break;
    case 4:
      if (t.is_float) ((float *)buf)[i] = (float)v; else ((int32_t *)buf)[i] = (int32_t)v;
      break;
    default:
      if (t.is_float) ((double *)buf)[i] = (double)v; else ((int64_t *)buf)[i] = (int64_t)v;
  }
}

static long combine(MPI_Op op, long a, long b) {
  if (op == MPI_SUM) return a + b;
  if (op == MPI_PROD) return a * b;
  if (op == MPI_MIN) return a < b ? a : b;
  if (op == MPI_MAX) return a > b ? a : b;
  if (op == MPI_BAND) return a & b;
  if (op == MPI_BOR) return a | b;
  if (op == MPI_BXOR) return a ^ b;
  if (op == MPI_LAND) return (a != 0) && (b != 0);
  if (op == MPI_LOR) return (a != 0) || (b != 0);
  return (a != 0) != (b != 0); /* LXOR */
}

/* A C bool holds 0 or 1: its inputs are the values' low bits. */
static int input(struct type_case t, int r, int i) { return t.is_bool ? value(r, i) & 1 : value(r, i); }

static long expected(struct type_case t, MPI_Op op, int n, int i) {
  long acc = input(t, 0, i);
  for (int r = 1; r < n; ++r) acc = combine(op, acc, input(t, r, i));
  return acc;
}

/* `full`: every type below; else the first ten at the two middle counts only, for a
 * communicator of the world's size made from it (the types and ops map alike on every
 * communicator; a whole sweep again cost MPICH's own run, which the results are compared with,
 * 11 s at 4 ranks on 2 cores, where its ranks busy-poll). */
static void reductions(MPI_Comm comm, const char *name, int full) {
  int rank, n;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  /* The first ten at every count; the rest (every other predefined type braid reduces) at
   * two counts, which keeps the run short. */
  const struct type_case types[] = {
      {MPI_INT, sizeof(int), 0, 0},           {MPI_LONG, sizeof(long), 0, 0},
      {MPI_SHORT, sizeof(short), 0, 0},       {MPI_SIGNED_CHAR, 1, 0, 0},
      {MPI_UNSIGNED, sizeof(unsigned), 0, 0}, {MPI_UINT64_T, 8, 0, 0},
      {MPI_INT8_T, 1, 0, 0},                  {MPI_UINT16_T, 2, 0, 0},
      {MPI_FLOAT, sizeof(float), 1, 0},       {MPI_DOUBLE, sizeof(double), 1, 0},
      {MPI_LONG_LONG, sizeof(long long), 0, 0}, {MPI_CHAR, 1, 0, 0},
      {MPI_UNSIGNED_CHAR, 1, 0, 0},           {MPI_UNSIGNED_SHORT, sizeof(short), 0, 0},
      {MPI_UNSIGNED_LONG, sizeof(long), 0, 0}, {MPI_INT16_T, 2, 0, 0},
      {MPI_INT32_T, 4, 0, 0},                 {MPI_INT64_T, 8, 0, 0},
      {MPI_UINT8_T, 1, 0, 0},                 {MPI_UINT32_T, 4, 0, 0},
      {MPI_C_BOOL, sizeof(_Bool), 0, 1}};
  const size_t common_types = 10;
  const MPI_Op ops[] = {MPI_SUM, MPI_MIN, MPI_MAX, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR,
                        MPI_LXOR, MPI_PROD};
  const int counts[] = {1, 7, 1000, 20000};
  int id = 0;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t)
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o)
      for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c, ++id) {
        const struct type_case ty = types[t];
        const MPI_Op op = ops[o];
        const int count = counts[c];
        const int bitwise = op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR || op == MPI_LAND ||
                            op == MPI_LOR || op == MPI_LXOR;
        const int logical = op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR;
        if (ty.is_float && bitwise) continue;
        if (ty.is_bool && !logical) continue; /* MPI defines only the logical ops on C bool */
        if ((t >= common_types || !full) && (c == 0 || c == 3)) continue;
        if (t >= common_types && !full) continue;
        if (op == MPI_PROD && (n > 3 || ty.size < 4 || count > 7)) continue; /* stays exact */
        char *in = malloc((size_t)count * ty.size * (size_t)n);
        char *out = malloc((size_t)count * ty.size * (size_t)n);
        char *want = malloc((size_t)count * ty.size);
        for (int i = 0; i < count; ++i) store(ty, in, i, input(ty, rank, i));
        for (int i = 0; i < count; ++i) store(ty, want, i, expected(ty, op, n, i));
        const size_t bytes = (size_t)count * ty.size;
        const int in_place = id % 2;
        /* allreduce */
        if (in_place) memcpy(out, in, bytes);
        MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, count, ty.type, op, comm);
        made(ALLREDUCE, 1);
        check(memcmp(out, want, bytes) == 0, "allreduce", id, rank);
        digest(name, id, out, bytes);
        /* reduce to every root in turn */
        const int root = id % n;
        /* Under MPICH in place only at root 0: MPICH 4.0.2's own MPI_Reduce crashes (SIGSEGV in
         * memcpy) with MPI_IN_PLACE at any other root on 3 ranks, and BRAID_MPI=off runs
         * MPICH's. */
#ifdef MPICH_VERSION
        const int reduce_in_place = in_place && root == 0;
#else
        const int reduce_in_place = in_place;
#endif
        if (reduce_in_place && rank == root) memcpy(out, in, bytes);
        MPI_Reduce(reduce_in_place && rank == root ? MPI_IN_PLACE : in, out, count, ty.type, op,
                   root, comm);
        made(REDUCE, 1);
        if (rank == root) check(memcmp(out, want, bytes) == 0, "reduce", id, rank);
        /* reduce_scatter_block: rank r's block is elements [r*count/n ...) of an n-block input */
        if (count <= 1000) {
          for (int i = 0; i < count * n; ++i) store(ty, in, i, input(ty, rank, i));
          if (in_place) memcpy(out, in, bytes * (size_t)n);
          MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : in, out, count, ty.type, op, comm);
          made(REDUCE_SCATTER_BLOCK, 1);
          for (int i = 0; i < count; ++i) store(ty, want, i, expected(ty, op, n, rank * count + i));
          check(memcmp(out, want, bytes) == 0, "reduce_scatter_block", id, rank);
          int *rc = malloc(sizeof(int) * (size_t)n);
          for (int r = 0; r < n; ++r) rc[r] = count;
          /* In place: the input in recvbuf, this rank's block left at its start. */
          if (in_place) memcpy(out, in, bytes * (size_t)n);
          MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : in, out, rc, ty.type, op, comm);
          made(REDUCE_SCATTER, 1);
          check(memcmp(out, want, bytes) == 0, "reduce_scatter", id, rank);
          free(rc);
        }
        free(in);
        free(out);
        free(want);
      }
}

/* MPI_SUM by hand: braid must leave user ops to MPI. */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int *)inout)[i] += ((int *)in)[i];
}

static void passthrough(MPI_Comm comm) {
  int rank, n;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  MPI_Op mine;
  MPI_Op_create(user_sum, 1, &mine);
  int v = rank + 1, sum = 0;
  MPI_Allreduce(&v, &sum, 1, MPI_INT, mine, comm);
  made(ALLREDUCE, 0);
  if (comm_taken) reason("allreduce", "op braid does not have");
  check(sum == n * (n + 1) / 2, "allreduce user op", 0, rank);
  MPI_Op_free(&mine);
  /* An op MPI does not define on the type: MPI's own error (MPI_ERR_OP), not braid's. */
  MPI_Errhandler was;
  MPI_Comm_get_errhandler(comm, &was);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  double dv = 1.0, dr = 0.0;
  int err_class = MPI_SUCCESS;
  MPI_Error_class(MPI_Allreduce(&dv, &dr, 1, MPI_DOUBLE, MPI_BAND, comm), &err_class);
  made(ALLREDUCE, 0);
  if (comm_taken) reason("allreduce", "op MPI does not define");
  check(err_class == MPI_ERR_OP, "allreduce band on double", 0, rank);
  MPI_Comm_set_errhandler(comm, was);
  MPI_Errhandler_free(&was);
  struct { int value, rank; } loc = {rank % 2 ? 100 : rank, rank}, best;
  MPI_Allreduce(&loc, &best, 1, MPI_2INT, MPI_MINLOC, comm);
  made(ALLREDUCE, 0);
  check(best.value == 0 && best.rank == 0, "allreduce minloc", 0, rank);
  /* Unequal reduce_scatter counts. */
  int *rc = malloc(sizeof(int) * (size_t)n), total_count = 0;
  for (int r = 0; r < n; ++r) total_count += rc[r] = r + 1;
  int *in = malloc(sizeof(int) * (size_t)total_count), out[64];
  for (int i = 0; i < total_count; ++i) in[i] = i;
  MPI_Reduce_scatter(in, out, rc, MPI_INT, MPI_SUM, comm);
  made(REDUCE_SCATTER, n == 1); /* one rank: its counts are all equal */
  int first = 0;
  for (int r = 0; r < rank; ++r) first += rc[r];
  for (int i = 0; i < rc[rank]; ++i) check(out[i] == n * (first + i), "reduce_scatter unequal", i, rank);
  free(rc);
  free(in);
  /* Non-blocking: left to MPI for now. */
  MPI_Request req;
  v = rank;
  MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  made(IALLREDUCE, 0);
  if (comm_taken) reason("iallreduce", "non-blocking");
  check(sum == n * (n - 1) / 2, "iallreduce", 0, rank);
  v = rank == 0 ? 77 : 0;
  MPI_Ibcast(&v, 1, MPI_INT, 0, comm, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  made(IBCAST, 0);
  check(v == 77, "ibcast", 0, rank);
}

static void movement(MPI_Comm comm, const char *name) {
  int rank, n;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  const int counts[] = {1, 5, 3000, 70000};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const int count = counts[c];
    const size_t un = (size_t)n;
    int *send = malloc(sizeof(int) * (size_t)count * un);
    int *recv = malloc(sizeof(int) * (size_t)count * un);
    for (int in_place = 0; in_place < 2; ++in_place) {
      const int id = (int)c * 2 + in_place;
      /* bcast from every root in turn */
      const int root = id % n;
      for (int i = 0; i < count; ++i) recv[i] = rank == root ? value(root, i) : -1;
      MPI_Bcast(recv, count, MPI_INT, root, comm);
      made(BCAST, 1);
      for (int i = 0; i < count; ++i) check(recv[i] == value(root, i), "bcast", id, rank);
      /* allgather: block r = value(r, i) */
      for (int i = 0; i < count; ++i) send[i] = value(rank, i);
      if (in_place) memcpy(recv + (size_t)rank * (size_t)count, send, sizeof(int) * (size_t)count);
      MPI_Allgather(in_place ? MPI_IN_PLACE : send, count, MPI_INT, recv, count, MPI_INT, comm);
      made(ALLGATHER, 1);
      for (int r = 0; r < n; ++r)
        for (int i = 0; i < count; ++i)
          check(recv[(size_t)r * (size_t)count + (size_t)i] == value(r, i), "allgather", id, rank);
      digest(name, id, recv, sizeof(int) * (size_t)count * un);
      /* allgatherv: rank r gives (r % 3) * count / 2 elements, placed in reverse order */
      int *rc = malloc(sizeof(int) * un), *displ = malloc(sizeof(int) * un), at = 0;
      for (int r = n - 1; r >= 0; --r) {
        rc[r] = (r % 3) * count / 2;
        displ[r] = at;
        at += rc[r];
      }
      if (in_place) memcpy(recv + displ[rank], send, sizeof(int) * (size_t)rc[rank]);
      MPI_Allgatherv(in_place ? MPI_IN_PLACE : send, rc[rank], MPI_INT, recv, rc, displ, MPI_INT,
                     comm);
      made(ALLGATHERV, 1);
      for (int r = 0; r < n; ++r)
        for (int i = 0; i < rc[r]; ++i)
          check(recv[displ[r] + i] == value(r, i), "allgatherv", id, rank);
      /* The same addressed from the end of recv on odd ranks: negative displacements are
       * legal, and where a rank's blocks lie is its own business. */
      if (!in_place && rank % 2 == 1) {
        int *end = recv + at;
        for (int r = 0; r < n; ++r) displ[r] -= at;
        memset(recv, 0, sizeof(int) * (size_t)at);
        MPI_Allgatherv(send, rc[rank], MPI_INT, end, rc, displ, MPI_INT, comm);
        for (int r = 0; r < n; ++r) displ[r] += at;
      } else {
        MPI_Allgatherv(in_place ? MPI_IN_PLACE : send, rc[rank], MPI_INT, recv, rc, displ, MPI_INT,
                       comm);
      }
      made(ALLGATHERV, 1);
      for (int r = 0; r < n; ++r)
        for (int i = 0; i < rc[r]; ++i)
          check(recv[displ[r] + i] == value(r, i), "allgatherv negative displacements", id, rank);
      /* alltoall: block d of rank r = value(r * 100 + d, i) */
      for (int d = 0; d < n; ++d)
        for (int i = 0; i < count; ++i) send[(size_t)d * (size_t)count + (size_t)i] = value(rank * 100 + d, i);
      if (in_place) memcpy(recv, send, sizeof(int) * (size_t)count * un);
      MPI_Alltoall(in_place ? MPI_IN_PLACE : send, count, MPI_INT, recv, count, MPI_INT, comm);
      made(ALLTOALL, 1);
      for (int s = 0; s < n; ++s)
        for (int i = 0; i < count; ++i)
          check(recv[(size_t)s * (size_t)count + (size_t)i] == value(s * 100 + rank, i), "alltoall", id, rank);
      /* alltoallv: rank r sends (r + d) % 3 * count / 4 elements to d */
      int *sc = malloc(sizeof(int) * un), *sd = malloc(sizeof(int) * un);
      int *rcv = malloc(sizeof(int) * un), *rd = malloc(sizeof(int) * un), sat = 0, rat = 0;
      for (int d = 0; d < n; ++d) {
        sc[d] = (rank + d) % 3 * count / 4;
        sd[d] = sat;
        sat += sc[d];
        rcv[d] = (d + rank) % 3 * count / 4;
        rd[d] = rat;
        rat += rcv[d];
      }
      /* In place (every rank): recvbuf holds the blocks to send, laid out as received (the
       * counts to and from each peer are equal here, so sd == rd). */
      int *alltoallv_send = in_place ? recv : send;
      for (int d = 0; d < n; ++d)
        for (int i = 0; i < sc[d]; ++i) alltoallv_send[sd[d] + i] = value(rank * 100 + d, i);
      MPI_Alltoallv(in_place ? MPI_IN_PLACE : send, sc, sd, MPI_INT, recv, rcv, rd, MPI_INT, comm);
      made(ALLTOALLV, 1);
      for (int s = 0; s < n; ++s)
        for (int i = 0; i < rcv[s]; ++i)
          check(recv[rd[s] + i] == value(s * 100 + rank, i), "alltoallv", id, rank);
      free(sc); free(sd); free(rcv); free(rd); free(rc); free(displ);
      /* gather and scatter at every root */
      for (int i = 0; i < count; ++i) send[i] = value(rank, i);
      const int is_root = rank == root;
      if (in_place && is_root) memcpy(recv + (size_t)root * (size_t)count, send, sizeof(int) * (size_t)count);
      MPI_Gather(in_place && is_root ? MPI_IN_PLACE : send, count, MPI_INT, recv, count, MPI_INT,
                 root, comm);
      made(GATHER, 1);
      if (is_root)
        for (int r = 0; r < n; ++r)
          for (int i = 0; i < count; ++i)
            check(recv[(size_t)r * (size_t)count + (size_t)i] == value(r, i), "gather", id, rank);
      if (is_root)
        for (int d = 0; d < n; ++d)
          for (int i = 0; i < count; ++i) send[(size_t)d * (size_t)count + (size_t)i] = value(d + 50, i);
      int *mine = in_place && is_root ? send + (size_t)root * (size_t)count : recv;
      MPI_Scatter(send, count, MPI_INT, in_place && is_root ? MPI_IN_PLACE : recv, count, MPI_INT,
                  root, comm);
      made(SCATTER, 1);
      for (int i = 0; i < count; ++i) check(mine[i] == value(rank + 50, i), "scatter", id, rank);
      MPI_Barrier(comm);
      made(BARRIER, 1);
    }
    free(send);
    free(recv);
  }
}

/* MPI traffic in flight while braid runs a collective, which a peer must see through before it
 * enters that collective: a large send (under MPICH and Open MPI's TCP, it moves only while
 * the sender is inside MPI) and a passive-target put to a rank waiting in a barrier. braid
 * drives MPI's progress while it waits; without that, both waited out BRAID_TIMEOUT. */
static void mpi_progress_inside_braid(MPI_Comm comm) {
  int rank, n;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  if (n < 2) return;
  const int bytes = 8 << 20;
  char *big = malloc((size_t)bytes);
  int x = rank, sum = 0;
  if (rank == 0) {
    for (int i = 0; i < bytes; ++i) big[i] = (char)i;
    MPI_Request req;
    MPI_Isend(big, bytes, MPI_CHAR, 1, 7, comm, &req);
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    if (rank == 1) MPI_Recv(big, bytes, MPI_CHAR, 0, 7, comm, MPI_STATUS_IGNORE);
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (rank == 1) check(big[12345] == (char)12345, "isend beside allreduce", 0, rank);
  }
  made(ALLREDUCE, 1);
  check(sum == n * (n - 1) / 2, "allreduce beside an isend", 0, rank);
  free(big);
  /* Open MPI has no one-sided component for TCP between hosts (srun -N 2 here): there the
   * window cannot be made, with or without braid, and the put is left out. */
  int *target = NULL;
  MPI_Win win;
  MPI_Errhandler was;
  MPI_Comm_get_errhandler(comm, &was);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int have = MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &target, &win) ==
             MPI_SUCCESS,
      all = 0;
  MPI_Comm_set_errhandler(comm, was);
  MPI_Errhandler_free(&was);
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, comm);
  made(ALLREDUCE, 1);
  if (all) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    *target = 0;
    MPI_Win_unlock(rank, win);
  }
  MPI_Barrier(comm);
  made(BARRIER, 1);
  if (all && rank == 1) {
    const int value = 42;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(comm);
  made(BARRIER, 1);
  if (all && rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    check(*target == 42, "put while the target waits in a barrier", 0, rank);
    MPI_Win_unlock(0, win);
  }
  if (have) MPI_Win_free(&win);
}

static void everything(MPI_Comm comm, const char *name, int full) {
  reductions(comm, name, full);
  movement(comm, name);
  passthrough(comm);
  datatypes(comm);
  if (full) refused_buffers(comm);
}

/* Rows and columns of a process grid two ranks wide, split from the world. */
static void grid(void) {
  MPI_Comm row, col;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank / 2, world_rank % 2, &row);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank / 2, &col);
  movement(row, "row");
  movement(col, "col");
  MPI_Comm both[2] = {row, col};
  for (int k = 0; k < 2; ++k) {
    int n, v[1000], sum[1000];
    MPI_Comm_size(both[k], &n);
    for (int i = 0; i < 1000; ++i) v[i] = world_rank + i;
    MPI_Allreduce(v, sum, 1000, MPI_INT, MPI_SUM, both[k]);
    made(ALLREDUCE, 1);
    digest(k ? "col" : "row", 1000, sum, sizeof sum);
  }
  MPI_Comm_free(&col);
  MPI_Comm_free(&row);
}

/* MPI_TEST_ERRORS=return|fatal: a braid failure inside a taken call reaches the communicator's
 * error handler. The counts of one allreduce differ between ranks (an erroneous program, which
 * only braid's checks make defined): with MPI_ERRORS_RETURN the call returns an error on every
 * rank and the communicator still works; with MPI_ERRORS_ARE_FATAL the job aborts. */
static int errors(const char *mode) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (strcmp(mode, "return") == 0) MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
  const int rc = MPI_Allreduce(v, out, world_rank == 0 ? 4 : 8, MPI_INT, MPI_SUM, comm);
  if (rc == MPI_SUCCESS) {
    fprintf(stderr, "FAIL rank %d: mismatched allreduce returned MPI_SUCCESS\n", world_rank);
    return 1;
  }
  int cls = 0, n = 0, len = 0, sum = 0;
  char text[MPI_MAX_ERROR_STRING];
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, text, &len);
  MPI_Comm_size(comm, &n);
  const int one = 1;
  const int again = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
  if (again != MPI_SUCCESS || sum != n) {
    fprintf(stderr, "FAIL rank %d: the communicator after the error: rc %d, sum %d of %d\n",
            world_rank, again, sum, n);
    return 1;
  }
  printf("ERRORS_RETURN rank %d: class %d (%s); the next allreduce gave %d\n", world_rank, cls,
         text, sum);
  MPI_Comm_free(&comm);
  return 0;
}

int main(int argc, char **argv) {
  /* MPI_TEST_THREAD_LEVEL=funneled|serialized|multiple: MPI_Init_thread at that level. Under
   * MPI_THREAD_MULTIPLE the library leaves MPI's idups (made lazily) to MPI. */
  const char *level = getenv("MPI_TEST_THREAD_LEVEL");
  int provided = MPI_THREAD_SINGLE;
  if (level != NULL) {
    const int want = strcmp(level, "multiple") == 0     ? MPI_THREAD_MULTIPLE
                     : strcmp(level, "serialized") == 0 ? MPI_THREAD_SERIALIZED
                                                        : MPI_THREAD_FUNNELED;
    MPI_Init_thread(&argc, &argv, want, &provided);
    if (provided != want) {
      fprintf(stderr, "FAIL: MPI_Init_thread(%s) provided %d, not %d\n", level, provided, want);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  } else {
    MPI_Init(&argc, &argv);
  }
  int n;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const char *out_dir = getenv("MPI_TEST_OUT");
  if (out_dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d", out_dir, world_rank);
    if (!freopen(path, "w", stdout)) {
      perror(path);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  const char *error_mode = getenv("MPI_TEST_ERRORS");
  if (error_mode != NULL) {
    const int bad = errors(error_mode);
    MPI_Finalize();
    return bad;
  }
  everything(MPI_COMM_WORLD, "world", 1);
  mpi_progress_inside_braid(MPI_COMM_WORLD);
  grid();
  MPI_Comm dup, half, node;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  everything(dup, "dup", 0);
  /* Even and odd ranks, keys reversed: the communicator's ranks run backwards. */
  MPI_Comm_split(dup, world_rank % 2, -world_rank, &half);
  everything(half, "half", 1);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  movement(node, "node");
  /* Created and freed in a loop, with a collective on each. */
  for (int i = 0; i < 50; ++i) {
    MPI_Comm tmp;
    MPI_Comm_dup(half, &tmp);
    int v = 1, s = 0, m;
    MPI_Comm_size(tmp, &m);
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, tmp);
    made(ALLREDUCE, 1);
    check(s == m, "allreduce on a fresh dup", i, -1);
    MPI_Comm_free(&tmp);
  }
  /* MPI's other dups copy the mirror as pending; braid makes it at the first collective
   * (not under MPI_THREAD_MULTIPLE: they stay MPI's). */
  comm_taken = provided != MPI_THREAD_MULTIPLE;
  {
    MPI_Comm idup, chained, orphan, with_info, unused;
    MPI_Request req;
    MPI_Comm_idup(half, &idup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    everything(idup, "idup", 1);
    /* A dup of a dup, both still pending at the inner one's first collective. */
    MPI_Comm_idup(dup, &orphan, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Comm_idup(orphan, &chained, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* The parent freed before its dup's first collective: braid keeps what the dup needs. */
    MPI_Comm_free(&orphan);
    int v = world_rank + 1, s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, chained);
    made(ALLREDUCE, 1);
    check(s == n * (n + 1) / 2, "allreduce on an idup of a freed idup", 0, -1);
    MPI_Comm_dup_with_info(half, MPI_INFO_NULL, &with_info);
    movement(with_info, "dup_with_info");
    /* Never used: freed while pending. */
    MPI_Comm_idup(dup, &unused, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Comm_free(&unused);
    MPI_Comm_free(&with_info);
    MPI_Comm_free(&chained);
    MPI_Comm_free(&idup);
  }
  comm_taken = 1;
  /* An intercommunicator between the halves: left to MPI. */
  if (n >= 2) {
    MPI_Comm inter;
    /* Each half's leader (its rank 0) is its highest world rank (keys were reversed). */
    const int other = 1 - world_rank % 2;
    const int remote_leader = (n - 1) % 2 == other ? n - 1 : n - 2;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 7, &inter);
    int v = 1, s = 0, remote;
    MPI_Comm_remote_size(inter, &remote);
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, inter);
    made(ALLREDUCE, 0);
    reason("allreduce", "intercommunicator");
    check(s == remote, "allreduce on an intercommunicator", 0, -1);
    MPI_Comm_free(&inter);
  }
  MPI_Comm_free(&node);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  for (int c = 0; c < NCOLL; ++c)
    if (total[c] > 0) printf("EXPECT %d %s %ld %ld\n", world_rank, names[c], taken[c], total[c]);
  fflush(stdout);
  int bad = failures > 0;
  MPI_Finalize();
  return bad;
}
