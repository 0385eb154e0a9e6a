// The UCX transport plugin: braid's transport ABI v2 on UCP's tag-matching API. UCX chooses its
// own transports (shared memory, TCP, verbs) and its own eager/rendezvous protocols.
#include <braid/transport.h>
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "ucx_context.hpp"
#include "ucx_request.hpp"

namespace braid::ucx {
namespace {

Context *as_ctx(braid_transport_ctx_t c) {
  return static_cast<Context *>(c);
}

int probe(char *why, size_t why_len) {
  // UCX always has at least TCP and shared memory, so it is usable wherever it loads.
  if (why != nullptr && why_len > 0) why[0] = '\0';
  return 1;
}

int init(const braid_transport_init_args_t *args, braid_transport_ctx_t *out) {
  Context *ctx = nullptr;
  int rc = context_create(args, &ctx);
  if (rc == BRAID_SUCCESS) *out = ctx;
  return rc;
}

int get_properties(braid_transport_ctx_t c, braid_transport_props_t *props) {
  Context *ctx = as_ctx(c);
  std::memset(props, 0, sizeof *props);
  std::snprintf(props->name, sizeof props->name, "ucx");
  std::snprintf(props->device, sizeof props->device, "%s", ctx->device.c_str());
  props->numa_node = -1;
  props->eager_limit = 8192;  // UCX's own rendezvous threshold decides; this is a hint
  // UCP takes any size, but bounding a message keeps chunked pipelines and >2^31 paths honest.
  props->max_message = size_t{1} << 30;
  props->tag_bits = kTagBits;
  return BRAID_SUCCESS;
}

int reg_mr(braid_transport_ctx_t c, void *addr, size_t bytes, braid_transport_mr_t *mr) {
  Context *ctx = as_ctx(c);
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = addr;
  params.length = bytes;
  ucp_mem_h memh = nullptr;
  ucs_status_t st = ucp_mem_map(ctx->context, &params, &memh);
  if (st != UCS_OK)
    return ctx->error(BRAID_ERR_TRANSPORT, "ucx: ucp_mem_map of %zu bytes at %p: %s", bytes, addr,
                      ucs_status_string(st));
  *mr = memh;
  return BRAID_SUCCESS;
}

int dereg_mr(braid_transport_ctx_t c, braid_transport_mr_t mr) {
  Context *ctx = as_ctx(c);
  if (mr == nullptr) return BRAID_SUCCESS;
  ucs_status_t st = ucp_mem_unmap(ctx->context, static_cast<ucp_mem_h>(mr));
  if (st != UCS_OK)
    return ctx->error(BRAID_ERR_TRANSPORT, "ucx: ucp_mem_unmap: %s", ucs_status_string(st));
  return BRAID_SUCCESS;
}

int isend(braid_transport_ctx_t c, int peer, uint64_t tag, const void *buf, size_t bytes,
          braid_transport_mr_t mr, braid_transport_req_t *out) {
  Request *req = nullptr;
  int rc = post_send(as_ctx(c), peer, tag, buf, bytes, static_cast<ucp_mem_h>(mr), &req);
  if (rc == BRAID_SUCCESS) *out = req;
  return rc;
}

int irecv(braid_transport_ctx_t c, int peer, uint64_t tag, void *buf, size_t bytes,
          braid_transport_mr_t mr, braid_transport_req_t *out) {
  Request *req = nullptr;
  int rc = post_recv(as_ctx(c), peer, tag, buf, bytes, static_cast<ucp_mem_h>(mr), &req);
  if (rc == BRAID_SUCCESS) *out = req;
  return rc;
}

int test(braid_transport_ctx_t, braid_transport_req_t r, int *done, size_t *bytes) {
  return test_request(static_cast<Request *>(r), done, bytes);
}

int progress(braid_transport_ctx_t c) {
  Context *ctx = as_ctx(c);
  // Drain everything ready now: one call may handle only one event.
  while (ucp_worker_progress(ctx->worker) != 0) {
  }
  return BRAID_SUCCESS;
}

int wait(braid_transport_ctx_t c, int timeout_ms) {
  Context *ctx = as_ctx(c);
  if (ctx->event_fd < 0) {
    usleep(static_cast<useconds_t>(timeout_ms > 1 ? 1000 : timeout_ms * 1000));
    return BRAID_SUCCESS;
  }
  // arm() reports BUSY when events are already pending; then there is nothing to wait for.
  ucs_status_t st = ucp_worker_arm(ctx->worker);
  if (st == UCS_ERR_BUSY) return BRAID_SUCCESS;
  if (st != UCS_OK)
    return ctx->error(BRAID_ERR_TRANSPORT, "ucx: ucp_worker_arm: %s", ucs_status_string(st));
  pollfd pfd{ctx->event_fd, POLLIN, 0};
  (void)poll(&pfd, 1, timeout_ms);
  return BRAID_SUCCESS;
}

int cancel(braid_transport_ctx_t, braid_transport_req_t r) {
  return cancel_request(static_cast<Request *>(r));
}

int counters(braid_transport_ctx_t c, braid_transport_counter_t *out, size_t *n) {
  const Counters &k = as_ctx(c)->counters;
  const plugin::NamedCounter all[] = {{"sends", k.sends},
                                      {"receives", k.recvs},
                                      {"bytes_sent", k.bytes_sent},
                                      {"bytes_received", k.bytes_received},
                                      {"cancels", k.cancels}};
  return plugin::copy_counters(all, out, n);
}

int finalize(braid_transport_ctx_t c) {
  context_destroy(as_ctx(c));
  return BRAID_SUCCESS;
}

}  // namespace
}  // namespace braid::ucx

// ABI v2: UCX allocates its own bounce buffers, so it uses only `numa_node` (logged at init).
extern "C" __attribute__((visibility("default"))) const braid_transport_v2_t braid_transport_v2 = {
    "ucx",
    braid::ucx::probe,
    braid::ucx::init,
    braid::ucx::get_properties,
    braid::ucx::reg_mr,
    braid::ucx::dereg_mr,
    braid::ucx::isend,
    braid::ucx::irecv,
    braid::ucx::test,
    braid::ucx::progress,
    braid::ucx::wait,
    braid::ucx::cancel,
    braid::ucx::counters,
    braid::ucx::finalize,
};
