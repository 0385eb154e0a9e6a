// The verbs transport plugin: braid's transport ABI on rdma-core (libibverbs + librdmacm), with
// its own eager/rendezvous protocols, credit flow control and shared receive queues.
#include <braid/transport.h>

#include <cstdio>
#include <cstring>

#include "cancel.hpp"
#include "completion.hpp"
#include "context.hpp"
#include "device.hpp"
#include "direct.hpp"
#include "inline_send.hpp"
#include "match.hpp"
#include "options.hpp"
#include "rendezvous.hpp"
#include "send.hpp"

namespace braid::verbs {
namespace {

Context *as_ctx(braid_transport_ctx_t c) {
  return static_cast<Context *>(c);
}

int probe(char *why, size_t why_len) {
  Options opt;
  std::string reason;
  if (!parse_options(process_env, &opt, &reason)) {
    std::snprintf(why, why_len, "%s", reason.c_str());
    return 0;
  }
  DeviceChoice choice;
  if (!choose_device(opt.device, opt.port, &choice, &reason)) {
    std::snprintf(why, why_len, "%s", reason.c_str());
    return 0;
  }
  if (why_len > 0) why[0] = '\0';
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
  std::snprintf(props->name, sizeof props->name, "verbs");
  std::snprintf(props->device, sizeof props->device, "%s:%d", ctx->device_name.c_str(), ctx->port);
  props->numa_node = ctx->numa_node;
  props->eager_limit = ctx->eager_limit;
  props->max_message = size_t{1} << 30;
  props->tag_bits = 64;
  return BRAID_SUCCESS;
}

// Registrations the caller keeps (braid_mem_alloc memory): local write for receives into it,
// remote read for rendezvous sends from it, remote write for direct messages into it (only
// with BRAID_VERBS_DIRECT=on: otherwise no peer has any business writing there).
int reg_mr(braid_transport_ctx_t c, void *addr, size_t bytes, braid_transport_mr_t *mr) {
  Context *ctx = as_ctx(c);
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
                     (ctx->opt.direct ? IBV_ACCESS_REMOTE_WRITE : 0);
  ibv_mr *m = ibv_reg_mr(ctx->pd, addr, bytes, access);
  if (m == nullptr)
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: ibv_reg_mr of %zu bytes at %p: %s",
                      ctx->rank, bytes, addr, std::strerror(errno));
  *mr = m;
  return BRAID_SUCCESS;
}

int dereg_mr(braid_transport_ctx_t c, braid_transport_mr_t mr) {
  if (mr == nullptr) return BRAID_SUCCESS;
  int rc = ibv_dereg_mr(static_cast<ibv_mr *>(mr));
  if (rc != 0)
    return as_ctx(c)->error(BRAID_ERR_TRANSPORT, "verbs: ibv_dereg_mr: %s", std::strerror(rc));
  return BRAID_SUCCESS;
}

int check_peer(Context *ctx, int peer, const char *op) {
  if (peer < 0 || peer >= ctx->size)
    return ctx->error(BRAID_ERR_INVALID_ARGUMENT, "verbs: rank %d: %s names rank %d of %d",
                      ctx->rank, op, peer, ctx->size);
  const PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  if (ps.failed != 0) return ctx->error(ps.failed, "%s", ps.failure.c_str());
  if (ctx->fatal != 0) return ctx->error(ctx->fatal, "%s", ctx->fatal_text.c_str());
  return BRAID_SUCCESS;
}

int isend(braid_transport_ctx_t c, int peer, uint64_t tag, const void *buf, size_t bytes,
          braid_transport_mr_t mr, braid_transport_req_t *out) {
  Context *ctx = as_ctx(c);
  int rc = check_peer(ctx, peer, "isend");
  if (rc != BRAID_SUCCESS) return rc;
  Request *req = ctx->requests.allocate(ReqKind::Send, peer, tag, const_cast<void *>(buf), bytes);
  req->user_mr = static_cast<ibv_mr *>(mr);
  if (peer == ctx->rank) {
    rc = deliver_local(ctx, req);
  } else if (bytes <= ctx->fast_inline_max && ctx->fast_inline &&
             try_send_inline(ctx, peer, req, &rc)) {
    if (rc != BRAID_SUCCESS) fail_peer_after(ctx, peer, rc, "verbs: ibv_post_send failed");
  } else {
    Outgoing o;
    o.msn = ctx->peers[static_cast<size_t>(peer)].next_send_msn;
    o.tag = tag;
    o.req = req;
    int klass;
    if (bytes <= ctx->eager_limit) {
      o.type = MsgType::Eager;
      klass = class_for(ctx, sizeof(Header) + bytes);
    } else {
      o.type = MsgType::Rts;
      klass = class_for(ctx, sizeof(Header) + sizeof(RtsBody));
      rc = prepare_rendezvous_send(ctx, req);
      o.rts = req->rts;
    }
    if (rc == BRAID_SUCCESS) {
      PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
      // Only a message that is sent counts against the peer's adverts.
      if (take_advert(ctx, peer, o.msn, tag, bytes, &o.direct)) {
        o.type = MsgType::Direct;
      } else {
        // Its class stays the one chosen with the header counted, so that it can take the
        // header after all when it must carry an acknowledgement (send.cpp).
        if (o.type == MsgType::Eager && headerless_fits(ctx, ps, tag, bytes, &o.delta))
          o.type = MsgType::Headerless;
        ps.last_sent_tag = tag;
        ps.sent_tag = true;
      }
      ++ps.next_send_msn;
      rc = send_now(ctx, peer, klass, std::move(o));
      // The message's number is taken: without it the peer would hold every later message
      // back forever, waiting for this one. The connection is lost, and says so.
      if (rc != BRAID_SUCCESS) fail_peer_after(ctx, peer, rc, "verbs: ibv_post_send failed");
    }
  }
  if (rc != BRAID_SUCCESS) {
    release_transient(req);
    ctx->requests.release(req);
    return rc;
  }
  *out = req;
  return BRAID_SUCCESS;
}

int irecv(braid_transport_ctx_t c, int peer, uint64_t tag, void *buf, size_t bytes,
          braid_transport_mr_t mr, braid_transport_req_t *out) {
  Context *ctx = as_ctx(c);
  int rc = check_peer(ctx, peer, "irecv");
  if (rc != BRAID_SUCCESS) return rc;
  Request *req = ctx->requests.allocate(ReqKind::Recv, peer, tag, buf, bytes);
  req->user_mr = static_cast<ibv_mr *>(mr);
  rc = post_receive(ctx, req);
  if (rc != BRAID_SUCCESS) {
    release_transient(req, true);
    ctx->requests.release(req);
    return rc;
  }
  *out = req;
  return BRAID_SUCCESS;
}

int test(braid_transport_ctx_t c, braid_transport_req_t r, int *done, size_t *bytes) {
  Context *ctx = as_ctx(c);
  auto *req = static_cast<Request *>(r);
  if (req->state == ReqState::Done) {
    if (bytes != nullptr) *bytes = req->kind == ReqKind::Recv ? req->received : req->bytes;
    *done = 1;
    ctx->requests.release(req);
    return BRAID_SUCCESS;
  }
  if (req->state == ReqState::Failed) {
    *done = 1;
    int code = req->status;
    ctx->error(code, "%s", req->error.c_str());
    ctx->requests.release(req);
    return code;
  }
  *done = 0;
  return BRAID_SUCCESS;
}

int progress(braid_transport_ctx_t c) {
  return progress_all(as_ctx(c));
}

int wait(braid_transport_ctx_t c, int timeout_ms) {
  return wait_for_events(as_ctx(c), timeout_ms);
}

int cancel(braid_transport_ctx_t c, braid_transport_req_t r) {
  return cancel_request(as_ctx(c), static_cast<Request *>(r));
}

int counters(braid_transport_ctx_t c, braid_transport_counter_t *out, size_t *n) {
  Context *ctx = as_ctx(c);
  const Counters &k = ctx->counters;
  const RegCacheStats rs = ctx->rcache != nullptr ? ctx->rcache->stats() : RegCacheStats{};
  const plugin::NamedCounter all[] = {{"inline_msgs", k.inline_msgs},
                                      {"inline_bytes", k.inline_bytes},
                                      {"fast_inline_msgs", k.fast_inline_msgs},
                                      {"eager_msgs", k.eager_msgs},
                                      {"eager_bytes", k.eager_bytes},
                                      {"rendezvous_msgs", k.rndv_msgs},
                                      {"rendezvous_bytes", k.rndv_bytes},
                                      {"rdma_reads", k.rdma_reads},
                                      {"control_msgs", k.control_msgs},
                                      {"credit_msgs", k.credit_msgs},
                                      {"credit_stalls", k.credit_stalls},
                                      {"send_stalls", k.send_stalls},
                                      {"recvs_posted", k.recvs_posted},
                                      {"recv_post_retries", k.recv_post_retries},
                                      {"srq_limit_events", k.srq_limit_events},
                                      {"srq_grows", k.srq_grows},
                                      {"unexpected_msgs", k.unexpected_msgs},
                                      {"reordered_msgs", k.reordered_msgs},
                                      {"recv_buffer_bytes", k.recv_buffer_bytes},
                                      {"send_buffer_bytes", k.send_buffer_bytes},
                                      {"transient_registrations", k.transient_regs},
                                      {"direct_adverts", k.adverts},
                                      {"direct_adverts_unused", k.adverts_unused},
                                      {"direct_msgs", k.direct_msgs},
                                      {"direct_bytes", k.direct_bytes},
                                      {"direct_retracts", k.retracts},
                                      {"headerless_msgs", k.headerless_msgs},
                                      {"headerless_fallbacks", k.headerless_fallbacks},
                                      {"qps", k.qps},
                                      {"short_rnr_timer_qps", k.short_rnr_timer_qps},
                                      {"rcache_enabled", ctx->rcache != nullptr ? 1u : 0u},
                                      {"rcache_hits", rs.hits},
                                      {"rcache_misses", rs.misses},
                                      {"rcache_invalidated", rs.invalidated},
                                      {"rcache_evicted", rs.evicted},
                                      {"rcache_uncacheable", rs.uncacheable},
                                      {"rcache_entries", rs.entries},
                                      {"rcache_bytes", rs.bytes}};
  return plugin::copy_counters(all, out, n);
}

int finalize(braid_transport_ctx_t c) {
  context_destroy(as_ctx(c));
  return BRAID_SUCCESS;
}

}  // namespace
}  // namespace braid::verbs

extern "C" __attribute__((visibility("default"))) const braid_transport_v2_t braid_transport_v2 = {
    "verbs",
    braid::verbs::probe,
    braid::verbs::init,
    braid::verbs::get_properties,
    braid::verbs::reg_mr,
    braid::verbs::dereg_mr,
    braid::verbs::isend,
    braid::verbs::irecv,
    braid::verbs::test,
    braid::verbs::progress,
    braid::verbs::wait,
    braid::verbs::cancel,
    braid::verbs::counters,
    braid::verbs::finalize,
};
