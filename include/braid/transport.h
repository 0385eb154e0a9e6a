/* braid transport plugin ABI, version 2.
 *
 * A transport plugin is a shared library named libbraid-transport-<name>.so that exports one
 * object, `braid_transport_v2`, of type braid_transport_v2_t (v1 plugins, exporting
 * `braid_transport_v1`, still load: the function table is the same, and v2 only appended
 * fields to braid_transport_init_args_t, so a v1 plugin reads a valid prefix of it). braid looks for plugins in the
 * directory libbraid.so was loaded from (the install libdir), then in each absolute directory
 * of BRAID_PLUGIN_PATH (':'-separated); never in the current directory. It probes the newest
 * ABI version it knows first and refuses a plugin that exports none it knows, naming the file,
 * the versions found and the versions wanted.
 *
 * The plugin is point-to-point only: it moves tagged messages between ranks and never knows
 * which collective it serves.
 *
 * Conventions for every function:
 *  - returns a braid_result_t (BRAID_SUCCESS = 0); on failure the plugin writes a one-line
 *    message naming the peer, sizes and the underlying library's error into the err buffer
 *    given at init (see braid_transport_init_args_t::err), which braid shows to the user;
 *  - never blocks, except `wait`, which blocks at most its timeout;
 *  - is called from one thread at a time per context (braid serializes calls).
 *
 * Matching semantics: messages from one peer with the same tag match receives in posting
 * order. A receive may be longer than the message (the received length is reported by `test`),
 * never shorter: that is BRAID_ERR_MISMATCH with a message naming the peer and both sizes when
 * known. A peer whose process or connection died fails its requests with BRAID_ERR_PEER_FAILED.
 */
#ifndef BRAID_TRANSPORT_H
#define BRAID_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BRAID_TRANSPORT_ABI_VERSION 2

/* Out-of-band collective operations over the bootstrap network, for exchanging endpoint
 * addresses during init. Valid only during init. Both return a braid_result_t. */
typedef struct braid_bootstrap {
  void *ctx;
  int rank;
  int size;
  /* Every rank contributes `bytes` bytes from `in`; `out` receives size*bytes bytes, rank r's
   * contribution at offset r*bytes. Every rank must pass the same `bytes`. */
  int (*allgather)(void *ctx, const void *in, void *out, size_t bytes);
  int (*barrier)(void *ctx);
} braid_bootstrap_t;

typedef struct braid_transport_init_args {
  const braid_bootstrap_t *bootstrap;
  int local_rank;   /* rank among the processes on this host */
  int local_size;   /* processes on this host */
  double timeout_s; /* BRAID_TIMEOUT: the deadline for any wait inside the plugin */
  char *err;        /* where the plugin writes its last error message (NUL-terminated) */
  size_t err_len;
  /* Logging hook: level 0 = warn, 1 = info, 2 = trace. May be NULL. */
  void (*log)(int level, const char *msg);
  /* ABI v2: NUMA placement through braid's single hwloc topology, so plugins load none. */
  int numa_node;                                      /* node this rank is bound to, -1 unknown/unbound */
  int (*device_numa_node)(const char *os_device);     /* NUMA node nearest an OS device by name (e.g. "mlx5_0", "rxe0"), via hwloc; -1 when unknown */
  void *(*alloc_on_node)(size_t bytes, int numa_node); /* page-aligned, pages bound to numa_node (-1: no binding); NULL on failure */
  void (*free_on_node)(void *ptr, size_t bytes);
} braid_transport_init_args_t;

typedef struct braid_transport_props {
  char name[32];         /* "ucx", "verbs", ... */
  char device[64];       /* device or transport list actually used, for logs and braid-info */
  int numa_node;         /* NUMA node of the device, -1 when unknown */
  size_t eager_limit;    /* messages up to this size are sent eagerly (informational) */
  size_t max_message;    /* largest message one isend may carry; braid splits larger ones */
  unsigned tag_bits;     /* tags must be < 2^tag_bits (at least 32) */
  double latency_us;     /* hints for algorithm selection; 0 when unknown */
  double bandwidth_gbps;
} braid_transport_props_t;

typedef struct braid_transport_counter {
  char name[48];
  uint64_t value;
} braid_transport_counter_t;

typedef void *braid_transport_ctx_t; /* the plugin's per-communicator state */
typedef void *braid_transport_req_t; /* an outstanding send or receive */
typedef void *braid_transport_mr_t;  /* a memory registration; NULL means "none" */

typedef struct braid_transport_v1 {
  /* Name of the transport, equal to <name> in the library's file name. */
  const char *name;

  /* Says whether the transport can run here without initializing it (e.g. an active RDMA
   * port exists). Returns 1 if usable, 0 if not with the reason written to why. */
  int (*probe)(char *why, size_t why_len);

  /* Creates the context: opens devices, exchanges endpoint addresses through
   * args->bootstrap (collectively: every rank calls init), connects every peer. */
  int (*init)(const braid_transport_init_args_t *args, braid_transport_ctx_t *ctx);

  int (*get_properties)(braid_transport_ctx_t ctx, braid_transport_props_t *props);

  /* Registers [addr, addr+bytes) for sends and receives. Optional (may be NULL): a transport
   * that registers internally accepts a NULL mr in isend/irecv. A registration stays valid
   * until dereg_mr; the memory must outlive it. */
  int (*reg_mr)(braid_transport_ctx_t ctx, void *addr, size_t bytes, braid_transport_mr_t *mr);
  int (*dereg_mr)(braid_transport_ctx_t ctx, braid_transport_mr_t mr);

  /* Posts a send of `bytes` bytes to `peer` with `tag`. `mr` is a registration covering buf,
   * or NULL. The buffer must not be modified until the request completes. *req is always set
   * to a request to test, even when the send completed at once. */
  int (*isend)(braid_transport_ctx_t ctx, int peer, uint64_t tag, const void *buf, size_t bytes,
               braid_transport_mr_t mr, braid_transport_req_t *req);
  /* Posts a receive of at most `bytes` bytes from `peer` with `tag`. */
  int (*irecv)(braid_transport_ctx_t ctx, int peer, uint64_t tag, void *buf, size_t bytes,
               braid_transport_mr_t mr, braid_transport_req_t *req);

  /* Tests a request without progressing. Sets *done to 1 when it completed and then frees it
   * (for receives, *bytes gets the received length; bytes may be NULL). A failed request is
   * freed too and returns the error. */
  int (*test)(braid_transport_ctx_t ctx, braid_transport_req_t req, int *done, size_t *bytes);

  /* Makes progress on all outstanding operations. Returns an error only for failures not tied
   * to one request (e.g. a fatal device event). */
  int (*progress)(braid_transport_ctx_t ctx);

  /* Blocks until the transport has an event to progress or timeout_ms passes. Used by braid to
   * stop spinning when ranks outnumber cores. Optional (NULL: braid sleeps briefly instead). */
  int (*wait)(braid_transport_ctx_t ctx, int timeout_ms);

  /* Cancels and frees an outstanding request. After it returns, the request's buffer is no
   * longer accessed by the transport. */
  int (*cancel)(braid_transport_ctx_t ctx, braid_transport_req_t req);

  /* Copies up to *n counters into out and sets *n to the number available. */
  int (*counters)(braid_transport_ctx_t ctx, braid_transport_counter_t *out, size_t *n);

  /* Destroys the context. Outstanding requests are cancelled. */
  int (*finalize)(braid_transport_ctx_t ctx);
} braid_transport_v1_t;

/* ABI v2 has the same function table; what changed is braid_transport_init_args_t. */
typedef braid_transport_v1_t braid_transport_v2_t;

#ifdef __cplusplus
}
#endif

#endif /* BRAID_TRANSPORT_H */
