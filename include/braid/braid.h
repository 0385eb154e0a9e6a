/* braid: collective communication for HPC applications — C API.
 *
 * Threading: a communicator may be used by one thread at a time. braid_last_error() is
 * per thread. Every call that waits is bounded by BRAID_TIMEOUT (seconds, default 300).
 *
 * Buffers: sendbuf == recvbuf means in place. count is in elements; count 0 is a valid no-op.
 * Results of allreduce are bit-identical on every rank: each element is reduced in one place,
 * in one order, and then distributed.
 */
#ifndef BRAID_BRAID_H
#define BRAID_BRAID_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exported from libbraid.so, which hides everything else. */
#if defined(__GNUC__)
#define BRAID_API __attribute__((visibility("default")))
#else
#define BRAID_API
#endif

#define BRAID_VERSION_MAJOR 0
#define BRAID_VERSION_MINOR 1
#define BRAID_VERSION_PATCH 0

typedef struct braid_comm_s *braid_comm_t;
typedef struct braid_request_s *braid_request_t;

typedef enum braid_result {
  BRAID_SUCCESS = 0,
  BRAID_ERR_INVALID_ARGUMENT, /* bad dtype/op/root/buffer; detected on the calling rank */
  BRAID_ERR_MISMATCH,         /* ranks disagree about a collective's arguments */
  BRAID_ERR_TIMEOUT,          /* a wait exceeded BRAID_TIMEOUT; the message names the peer */
  BRAID_ERR_PEER_FAILED,      /* a peer process died or its connection broke */
  BRAID_ERR_TRANSPORT,        /* the transport plugin failed */
  BRAID_ERR_BOOTSTRAP,        /* the job could not be formed */
  BRAID_ERR_NO_MEMORY,
  BRAID_ERR_UNSUPPORTED,
  BRAID_ERR_INTERNAL
} braid_result_t;

typedef enum braid_dtype {
  BRAID_INT8,
  BRAID_UINT8,
  BRAID_INT32,
  BRAID_UINT32,
  BRAID_INT64,
  BRAID_UINT64,
  BRAID_FLOAT16,  /* IEEE binary16; reduced in float, rounded to nearest even */
  BRAID_BFLOAT16, /* bfloat16; reduced in float, rounded to nearest even */
  BRAID_FLOAT32,
  BRAID_FLOAT64,
  BRAID_INT16,
  BRAID_UINT16,
  /* Not dtypes: they make the enum span every int, so a bad value passed by a caller is a value
   * braid can reject with BRAID_ERR_INVALID_ARGUMENT rather than undefined behaviour in C++. */
  BRAID_DTYPE_RANGE_MIN_ = -2147483647 - 1,
  BRAID_DTYPE_RANGE_MAX_ = 2147483647
} braid_dtype_t;

typedef enum braid_op {
  BRAID_SUM,
  BRAID_PROD,
  BRAID_MIN,
  BRAID_MAX,
  /* BRAID_AVG: the sum is formed in the dtype itself, as BRAID_SUM's (integers wrap around,
   * floats may overflow to infinity), then divided once by the communicator's size. */
  BRAID_AVG, /* sum / size; integer dtypes: truncated toward zero */
  BRAID_BAND,
  BRAID_BOR,
  BRAID_BXOR, /* integer dtypes only; a float dtype is INVALID_ARGUMENT */
  BRAID_LAND,
  BRAID_LOR,
  BRAID_LXOR,                            /* integer dtypes only; result 0 or 1 */
  BRAID_OP_RANGE_MIN_ = -2147483647 - 1, /* not ops: see BRAID_DTYPE_RANGE_MIN_ */
  BRAID_OP_RANGE_MAX_ = 2147483647
} braid_op_t;

/* Joins the job described by the environment (BRAID_RANK, BRAID_SIZE, BRAID_BOOTSTRAP, ...);
 * without it the process is a 1-rank world. argc/argv may be NULL. Call once per process. */
BRAID_API braid_result_t braid_init(int *argc, char ***argv, braid_comm_t *world);
/* Releases the world communicator and the transport. Outstanding requests are abandoned. */
BRAID_API braid_result_t braid_finalize(void);

/* Communicators. split is collective over `comm`: ranks with the same color form one new
 * communicator, ordered by (key, rank in comm); color BRAID_UNDEFINED gives *newcomm = NULL, any
 * other negative color is BRAID_ERR_INVALID_ARGUMENT. dup is a split with one color and the same
 * order. Neither opens transport connections: a child shares its parent's endpoints, with a
 * context of its own so that its messages never match another communicator's. free of a
 * communicator with requests outstanding, or of the world, is BRAID_ERR_INVALID_ARGUMENT;
 * braid_finalize frees every communicator still alive. */
#define BRAID_UNDEFINED (-32766)
BRAID_API braid_result_t braid_comm_split(braid_comm_t comm, int color, int key,
                                          braid_comm_t *newcomm);
BRAID_API braid_result_t braid_comm_dup(braid_comm_t comm, braid_comm_t *newcomm);
BRAID_API braid_result_t braid_comm_free(braid_comm_t *comm); /* sets *comm = NULL */

/* Embedding: a communicator formed from an id the caller distributes by its own means (an MPI
 * broadcast, a file, a framework's key-value store), without braidrun or PMIx. One process calls
 * braid_get_unique_id (it then runs a small rendezvous service until the id's group has formed,
 * or it exits); the caller passes the 128 bytes to nranks processes, on any hosts, which each
 * call braid_comm_init_rank with a distinct rank. Works with or without braid_init; a process
 * may hold several such communicators. Bounded by BRAID_TIMEOUT; a forged or stale id, or ranks
 * that disagree on nranks, are BRAID_ERR_BOOTSTRAP. braid_comm_free of such a communicator
 * leaves its group, freeing what was split from it too; it waits (up to BRAID_TIMEOUT) until the
 * group's other ranks leave it as well, so processes in several groups free them in the same
 * order (braid_finalize leaves all of its groups at once). Each group needs an id of its own:
 * once an id's group has formed, using it again is BRAID_ERR_BOOTSTRAP at once (where the id
 * names only loopback addresses, as on a host with no other interface, within BRAID_TIMEOUT: a
 * refused loopback connection says nothing of a service on another host). */
typedef struct braid_unique_id {
  char internal[128];
} braid_unique_id_t;
BRAID_API braid_result_t braid_get_unique_id(braid_unique_id_t *id);
BRAID_API braid_result_t braid_comm_init_rank(braid_comm_t *comm, int nranks, braid_unique_id_t id,
                                              int rank);

BRAID_API int braid_comm_rank(braid_comm_t comm);              /* -1 for an invalid communicator */
BRAID_API int braid_comm_size(braid_comm_t comm);              /* -1 for an invalid communicator */
BRAID_API const char *braid_comm_transport(braid_comm_t comm); /* "ucx", "verbs", ... */

BRAID_API braid_result_t braid_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                                         braid_dtype_t dtype, braid_op_t op, braid_comm_t comm);
BRAID_API braid_result_t braid_broadcast(void *buf, size_t count, braid_dtype_t dtype, int root,
                                         braid_comm_t comm);
BRAID_API braid_result_t braid_barrier(braid_comm_t comm);

/* The rest of the set. Counts and displacements are in elements. For allgather, reduce_scatter,
 * alltoall, gather and scatter the count is one rank's block; the full buffer holds one block
 * per rank in rank order. In place: reduce at the root when sendbuf == recvbuf; allgather when
 * sendbuf points at this rank's block of recvbuf (allgatherv: recvbuf + displs[rank]);
 * reduce_scatter when recvbuf points at this rank's block of sendbuf; alltoall when
 * sendbuf == recvbuf; gather at the root when sendbuf points at the root's block of recvbuf, and
 * scatter at the root when recvbuf points at the root's block of sendbuf (that block is then
 * left as it is). recvbuf of reduce and gather, and sendbuf of scatter, are ignored off the
 * root (may be NULL). allgatherv's recvcounts[r] must be rank r's sendcount; alltoallv's
 * sendcounts[j] on rank i must be recvcounts[i] on rank j. Reductions give every rank that
 * receives an element the same bits. */
BRAID_API braid_result_t braid_reduce(const void *sendbuf, void *recvbuf, size_t count,
                                      braid_dtype_t dtype, braid_op_t op, int root,
                                      braid_comm_t comm);
BRAID_API braid_result_t braid_allgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                         braid_dtype_t dtype, braid_comm_t comm);
BRAID_API braid_result_t braid_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                          const size_t *recvcounts, const size_t *displs,
                                          braid_dtype_t dtype, braid_comm_t comm);
BRAID_API braid_result_t braid_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                              braid_dtype_t dtype, braid_op_t op,
                                              braid_comm_t comm);
BRAID_API braid_result_t braid_alltoall(const void *sendbuf, void *recvbuf, size_t count,
                                        braid_dtype_t dtype, braid_comm_t comm);
BRAID_API braid_result_t braid_alltoallv(const void *sendbuf, const size_t *sendcounts,
                                         const size_t *sdispls, void *recvbuf,
                                         const size_t *recvcounts, const size_t *rdispls,
                                         braid_dtype_t dtype, braid_comm_t comm);
BRAID_API braid_result_t braid_gather(const void *sendbuf, void *recvbuf, size_t count,
                                      braid_dtype_t dtype, int root, braid_comm_t comm);
BRAID_API braid_result_t braid_scatter(const void *sendbuf, void *recvbuf, size_t count,
                                       braid_dtype_t dtype, int root, braid_comm_t comm);

/* Non-blocking forms: several may be outstanding at once on one communicator. The buffers
 * (and the v-variants' count and displacement arrays) belong to braid until the request
 * completes. A call that fails sets *req to NULL (there is nothing to wait for). */
BRAID_API braid_result_t braid_iallreduce(const void *sendbuf, void *recvbuf, size_t count,
                                          braid_dtype_t dtype, braid_op_t op, braid_comm_t comm,
                                          braid_request_t *req);
BRAID_API braid_result_t braid_ibroadcast(void *buf, size_t count, braid_dtype_t dtype, int root,
                                          braid_comm_t comm, braid_request_t *req);
BRAID_API braid_result_t braid_ibarrier(braid_comm_t comm, braid_request_t *req);
BRAID_API braid_result_t braid_ireduce(const void *sendbuf, void *recvbuf, size_t count,
                                       braid_dtype_t dtype, braid_op_t op, int root,
                                       braid_comm_t comm, braid_request_t *req);
BRAID_API braid_result_t braid_iallgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                          braid_dtype_t dtype, braid_comm_t comm,
                                          braid_request_t *req);
BRAID_API braid_result_t braid_iallgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                           const size_t *recvcounts, const size_t *displs,
                                           braid_dtype_t dtype, braid_comm_t comm,
                                           braid_request_t *req);
BRAID_API braid_result_t braid_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                               braid_dtype_t dtype, braid_op_t op,
                                               braid_comm_t comm, braid_request_t *req);
BRAID_API braid_result_t braid_ialltoall(const void *sendbuf, void *recvbuf, size_t count,
                                         braid_dtype_t dtype, braid_comm_t comm,
                                         braid_request_t *req);
BRAID_API braid_result_t braid_ialltoallv(const void *sendbuf, const size_t *sendcounts,
                                          const size_t *sdispls, void *recvbuf,
                                          const size_t *recvcounts, const size_t *rdispls,
                                          braid_dtype_t dtype, braid_comm_t comm,
                                          braid_request_t *req);
BRAID_API braid_result_t braid_igather(const void *sendbuf, void *recvbuf, size_t count,
                                       braid_dtype_t dtype, int root, braid_comm_t comm,
                                       braid_request_t *req);
BRAID_API braid_result_t braid_iscatter(const void *sendbuf, void *recvbuf, size_t count,
                                        braid_dtype_t dtype, int root, braid_comm_t comm,
                                        braid_request_t *req);
/* When done, frees *req and sets it NULL; the result is the collective's. */
BRAID_API braid_result_t braid_test(braid_request_t *req, int *done);
/* Frees *req and sets it NULL; the result is the collective's. */
BRAID_API braid_result_t braid_wait(braid_request_t *req);

/* Counters of a communicator's transport (messages and bytes by protocol, receives posted, SRQ
 * limit events, credit stalls, registered memory, ... as the transport defines them) followed by
 * braid's own ("intranode_zero_copy_calls": node-local collectives done in place on
 * braid_mem_alloc buffers; "intranode_single_copy_calls": node-local collectives whose ranks
 * copied straight out of each other's ordinary buffers through cross-memory attach
 * (BRAID_CMA); "intranode_inline_calls": small blocking node-local collectives
 * completed by the calling thread alone; "intranode_streamed_calls": node-local allgather(v),
 * alltoall(v) and gather (at the root) calls whose copies into the result bypassed the cache:
 * their buffers exceeded four times the last-level cache the node's ranks share, or half of it
 * and the rank's timings chose (or tried) streaming (BRAID_CACHE_BYTES);
 * "intranode_streamed_deposits": node-local reduce calls on more than two ranks in which this
 * rank deposited into the node's windows with streaming stores, and gather calls with blocks of
 * 256 KiB or more whose root had the others deposit so, as its timings chose (or tried);
 * "intranode_slow_link_deposits": deposits of node-local allgather(v) and alltoall(v) calls
 * into the node's windows that this rank made with streaming stores because its own ordinary
 * ones ran slower than 8 GB/s (a slow spell of the core-to-core link; every one with
 * BRAID_CACHE_BYTES=1); "intranode_path": 1
 * when the communicator has the node-local shared-memory path, 0 when no two of its ranks share
 * this rank's node, it is off or shared memory could not be set up; "home_cpu_moves": times this
 * process moved a thread back to its own CPU, at init, after a long wait or after waking ranks that
 * waited long, where ranks with one unbound mask outnumber its CPUs (BRAID_HOME_CPU);
 * "collectives_started", always last). Copies up to *n into out and sets *n to the number
 * available; call with *n = 0 to size the array. */
typedef struct braid_counter {
  char name[48];
  uint64_t value;
} braid_counter_t;
BRAID_API braid_result_t braid_comm_counters(braid_comm_t comm, braid_counter_t *out, size_t *n);

/* NUMA placement. Nodes are OS indexes (as numactl and /sys/devices/system/node number them).
 * braid_mem_alloc returns page-aligned memory whose pages are bound to `numa_node` (placed on
 * first touch); BRAID_NUMA_LOCAL means the calling rank's node. A node that does not exist is
 * BRAID_ERR_INVALID_ARGUMENT naming the nodes that do. Collectives on such memory use a
 * transport registration made once per communicator, not one per call, and ranks of one node
 * work on each other's such buffers in place (the memory is a shared memfd: a child process
 * forked after the call shares it rather than copying it). Needs no braid_init. */
#define BRAID_NUMA_LOCAL (-1)
BRAID_API braid_result_t braid_mem_alloc(
    size_t bytes, int numa_node,
    void **ptr); /* pages bound to that node; BRAID_NUMA_LOCAL = the calling rank's node */
BRAID_API braid_result_t braid_mem_free(void *ptr); /* NULL is a no-op */
BRAID_API int braid_comm_numa_node(
    braid_comm_t comm); /* node this rank is bound to, -1 if unbound or unknown */

BRAID_API const char *braid_strerror(braid_result_t r);
/* This thread's detailed message for its last failure ("" if none). */
BRAID_API const char *braid_last_error(void);

/* For a library that runs braid beside another runtime (braid's MPI interposition library):
 * fn(arg) is called by a thread whose braid call has waited idle for a while (50 us, then
 * between its yields and sleeps), so that the other runtime's pending work, which a peer may
 * have to finish before it can enter braid's call (an MPI send, a one-sided access), keeps
 * moving. Process-wide; NULL removes it. */
BRAID_API void braid_set_idle_callback(void (*fn)(void *arg), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* BRAID_BRAID_H */
