#include "ucx_context.hpp"
#include "ucx_request.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace braid::ucx {

namespace {

void on_endpoint_error(void *arg, ucp_ep_h, ucs_status_t status) {
  auto *ref = static_cast<PeerRef *>(arg);
  ref->ctx->peer_status[ref->peer] = status;
  ref->ctx->logf(0, "ucx: connection to rank %d failed: %s", ref->peer, ucs_status_string(status));
}

int init_ucp(Context *ctx) {
  ucp_config_t *config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
  if (st != UCS_OK)
    return ctx->error(BRAID_ERR_TRANSPORT, "ucp_config_read: %s", ucs_status_string(st));
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  params.estimated_num_eps = static_cast<size_t>(ctx->size);
  st = ucp_init(&params, config, &ctx->context);
  ucp_config_release(config);
  if (st != UCS_OK) return ctx->error(BRAID_ERR_TRANSPORT, "ucp_init: %s", ucs_status_string(st));

  ucp_worker_params_t wparams{};
  wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // Serialized, not single: braid calls the plugin from whichever application thread is in a
  // collective (one at a time, under the transport's lock), and UCX's single mode means one
  // thread only.
  wparams.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  st = ucp_worker_create(ctx->context, &wparams, &ctx->worker);
  if (st != UCS_OK)
    return ctx->error(BRAID_ERR_TRANSPORT, "ucp_worker_create: %s", ucs_status_string(st));
  st = ucp_worker_get_efd(ctx->worker, &ctx->event_fd);
  if (st != UCS_OK) ctx->event_fd = -1;  // wait() then falls back to short sleeps
  return BRAID_SUCCESS;
}

// Worker addresses differ in length, so the exchange is two allgathers: lengths, then the
// addresses padded to the longest. A rank whose UCX did not start (started false, its error
// already set) still joins the first with length 0, so that the others fail at once, naming
// it, instead of waiting in the exchange for it.
int exchange_addresses(Context *ctx, const braid_bootstrap_t *bs, bool started,
                       std::vector<uint8_t> *all, size_t *stride) {
  ucp_address_t *address = nullptr;
  size_t length = 0;
  int failed = BRAID_ERR_TRANSPORT;  // this rank's own error, when it cannot take part
  if (started) {
    ucs_status_t st = ucp_worker_get_address(ctx->worker, &address, &length);
    if (st != UCS_OK) {
      failed = ctx->error(BRAID_ERR_TRANSPORT, "ucp_worker_get_address: %s", ucs_status_string(st));
      address = nullptr;
      length = 0;
    }
  }
  std::vector<uint64_t> lengths(static_cast<size_t>(ctx->size));
  uint64_t mine = length;
  int rc = bs->allgather(bs->ctx, &mine, lengths.data(), sizeof mine);
  if (address == nullptr) return failed;  // its error is set; the others are told (length 0)
  std::string down;
  if (rc == BRAID_SUCCESS)
    for (int r = 0; r < ctx->size; ++r)
      if (lengths[static_cast<size_t>(r)] == 0)
        down += (down.empty() ? "" : ", ") + std::to_string(r);
  if (rc == BRAID_SUCCESS && down.empty()) {
    *stride = 0;
    for (uint64_t l : lengths) *stride = l > *stride ? l : *stride;
    std::vector<uint8_t> padded(*stride, 0);
    std::memcpy(padded.data(), address, length);
    all->resize(*stride * static_cast<size_t>(ctx->size));
    rc = bs->allgather(bs->ctx, padded.data(), all->data(), *stride);
  }
  ucp_worker_release_address(ctx->worker, address);
  if (!down.empty())
    return ctx->error(BRAID_ERR_TRANSPORT,
                      "ucx: UCX did not start on rank(s) %s (their own errors say why)",
                      down.c_str());
  if (rc != BRAID_SUCCESS)
    return ctx->error(rc, "ucx: worker address exchange over the bootstrap failed");
  return BRAID_SUCCESS;
}

}  // namespace

int context_create(const braid_transport_init_args_t *args, Context **out) {
  auto ctx = std::make_unique<Context>();
  const braid_bootstrap_t *bs = args->bootstrap;
  ctx->rank = bs->rank;
  ctx->size = bs->size;
  ctx->timeout_s = args->timeout_s;
  ctx->err = args->err;
  ctx->err_len = args->err_len;
  ctx->log = args->log;
  // ABI v2 field (this plugin exports only v2, so it is always there). UCX allocates and
  // places its own bounce buffers; the node is reported for the logs.
  ctx->logf(1, "ucx: rank bound to NUMA node %d; UCX places its own internal buffers",
            args->numa_node);
  const char *peer_errors = std::getenv("BRAID_UCX_PEER_ERRORS");
  ctx->peer_errors = peer_errors != nullptr && peer_errors[0] == '1';
  if (ctx->size >= (1 << kRankBits))
    return ctx->error(BRAID_ERR_UNSUPPORTED, "ucx: %d ranks exceed the %d the tag layout allows",
                      ctx->size, 1 << kRankBits);
  const int started = init_ucp(ctx.get());
  std::vector<uint8_t> addresses;
  size_t stride = 0;
  int rc = exchange_addresses(ctx.get(), bs, started == BRAID_SUCCESS, &addresses, &stride);
  if (started != BRAID_SUCCESS) rc = started;  // its own error, set by init_ucp
  if (rc != BRAID_SUCCESS) {
    context_destroy(ctx.release());
    return rc;
  }
  ctx->eps.assign(static_cast<size_t>(ctx->size), nullptr);
  ctx->peer_status.assign(static_cast<size_t>(ctx->size), UCS_OK);
  for (int peer = 0; peer < ctx->size; ++peer) {
    ctx->peer_refs.push_back(std::make_unique<PeerRef>(PeerRef{ctx.get(), peer}));
    PeerRef *ref = ctx->peer_refs.back().get();
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.address = reinterpret_cast<const ucp_address_t *>(addresses.data() + stride * peer);
    // UCX 1.13 supports peer error handling only on transports with keepalive (TCP, verbs),
    // so asking for it silently moves ranks of one node from shared memory to TCP loopback:
    // 11 us instead of 0.9 us for an 8-byte allreduce (docs/design.md). A dead peer is caught
    // by braid's own deadlines instead; BRAID_UCX_PEER_ERRORS=1 opts back in.
    ep.err_mode = ctx->peer_errors ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
    ep.err_handler.cb = on_endpoint_error;
    ep.err_handler.arg = ref;
    ucs_status_t st = ucp_ep_create(ctx->worker, &ep, &ctx->eps[static_cast<size_t>(peer)]);
    if (st != UCS_OK) {
      rc = ctx->error(BRAID_ERR_TRANSPORT, "ucx: ucp_ep_create to rank %d: %s", peer,
                      ucs_status_string(st));
      context_destroy(ctx.release());
      return rc;
    }
  }
  ucp_context_attr_t attr{};
  attr.field_mask = UCP_ATTR_FIELD_NAME;
  if (ucp_context_query(ctx->context, &attr) == UCS_OK) ctx->device = attr.name;
  if (const char *tls = std::getenv("UCX_TLS")) ctx->device = std::string("UCX_TLS=") + tls;
  ctx->logf(1, "ucx: %d endpoints created (%s)", ctx->size,
            ctx->device.empty() ? "default transports" : ctx->device.c_str());
  *out = ctx.release();
  return BRAID_SUCCESS;
}

// Bound on the progress passes that drain the worker before it is destroyed.
constexpr int kDrainPasses = 10000;

void context_destroy(Context *ctx) {
  if (ctx == nullptr) return;
  // One deadline for all the closes: each peer that does not answer must not add its own.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (ucp_ep_h &ep : ctx->eps) {
    if (ep == nullptr) continue;
    // Force close: a flush could wait forever for a peer that already left. Bounded too:
    // nothing in braid waits without a deadline (a close still under way after it is left to
    // ucp_worker_destroy).
    ucs_status_ptr_t req = ucp_ep_close_nb(ep, UCP_EP_CLOSE_MODE_FORCE);
    if (UCS_PTR_IS_PTR(req)) {
      while (ucp_request_check_status(req) == UCS_INPROGRESS &&
             std::chrono::steady_clock::now() < deadline)
        ucp_worker_progress(ctx->worker);
      ucp_request_free(req);
    }
    ep = nullptr;
  }
  if (ctx->worker != nullptr) {
    // Progress until nothing moves first: where a peer died in the middle of a transfer,
    // UCX 1.13 could still hold operations queued on its CMA endpoint, and destroying the
    // worker then aborted the process in an assertion (arbiter.c: "ucs_arbiter_group_is_empty")
    // inside braid_finalize: 7 of 329 4-rank KillMidPipeline runs with rank 2 killed, two
    // runs at a time; 0 of 419 with the drain.
    for (int i = 0; i < kDrainPasses && ucp_worker_progress(ctx->worker) != 0; ++i) {
    }
    ucp_worker_destroy(ctx->worker);
  }
  if (ctx->context != nullptr) ucp_cleanup(ctx->context);
  for (Request *req : ctx->live) delete req;
  delete ctx;
}

}  // namespace braid::ucx
