#include "context.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "connect.hpp"
#include "device.hpp"
#include "direct.hpp"
#include "inline_send.hpp"
#include "mem_monitor.hpp"
#include "queues.hpp"
#include "rendezvous.hpp"
#include "wr_id.hpp"

namespace braid::verbs {

void fail_request(Context *, Request *req, int code, const std::string &text) {
  if (req->state == ReqState::Done || req->state == ReqState::Failed) return;
  if (req->state == ReqState::Reading && req->reads_done < req->reads_posted) {
    // READs still in flight write into the user's buffer: the request fails once they drain.
    if (req->read_status == 0) {
      req->read_status = code;
      req->error = text;
    }
    return;
  }
  release_transient(req, true);
  req->status = code;
  req->error = text;
  req->state = ReqState::Failed;
}

void fail_peer(Context *ctx, int peer, int code, const std::string &text) {
  PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  if (ps.failed != 0) return;
  ps.failed = code;
  ps.failure = text;
  // Stop the device from touching user buffers for this peer: in the error state a QP flushes
  // its work requests instead of executing them.
  for (size_t k = 0; k < ctx->classes.size(); ++k) {
    Conn &conn = ctx->conn(peer, static_cast<int>(k));
    if (conn.qp != nullptr) {
      ibv_qp_attr attr{};
      attr.qp_state = IBV_QPS_ERR;
      ibv_modify_qp(conn.qp, &attr, IBV_QP_STATE);
    }
    conn.backlog.clear();
  }
  ps.posted.clear();
  forget_adverts(ctx, peer);
  for (size_t i = 0; i < ctx->requests.size(); ++i) {
    Request *req = ctx->requests.at(static_cast<uint32_t>(i));
    if (req->peer == peer) fail_request(ctx, req, code, text);
  }
}

void fail_peer_after(Context *ctx, int peer, int code, const char *fallback) {
  const std::string text = ctx->err != nullptr && ctx->err[0] != '\0' ? ctx->err : fallback;
  ctx->logf(0, "%s", text.c_str());
  fail_peer(ctx, peer, code, text);
}

namespace {

int open_device(Context *ctx) {
  DeviceChoice choice;
  std::string why;
  if (!choose_device(ctx->opt.device, ctx->opt.port, &choice, &why))
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: %s", ctx->rank, why.c_str());
  ctx->device_name = choice.name;
  ctx->port = static_cast<uint8_t>(choice.port);
  ctx->address = choice.address;
  ctx->address_text = choice.address_text;
  int rc = listen_on_device(ctx);
  if (rc != BRAID_SUCCESS) return rc;
  if (ibv_query_device(ctx->verbs, &ctx->dev_attr) != 0 ||
      ibv_query_port(ctx->verbs, ctx->port, &ctx->port_attr) != 0)
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: querying %s:%d: %s", ctx->rank,
                      ctx->device_name.c_str(), ctx->port, std::strerror(errno));
  ctx->max_msg_sz = ctx->port_attr.max_msg_sz;
  ctx->pd = ibv_alloc_pd(ctx->verbs);
  if (ctx->pd == nullptr)
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: ibv_alloc_pd on %s: %s", ctx->rank,
                      ctx->device_name.c_str(), std::strerror(errno));
  int flags = fcntl(ctx->verbs->async_fd, F_GETFL);
  fcntl(ctx->verbs->async_fd, F_SETFL, flags | O_NONBLOCK);
  return BRAID_SUCCESS;
}

// The registration cache, when asked for and the kernel lets us watch memory; otherwise every
// rendezvous registers its buffer for itself (correct, slower), and rcache_off says why.
void open_rcache(Context *ctx) {
  if (!ctx->opt.rcache) {
    ctx->rcache_off = "BRAID_VERBS_RCACHE=off";
    return;
  }
  if (const char *why = fork_keeps_cache_off(ibv_is_fork_initialized())) {
    ctx->rcache_off = why;
    return;
  }
  MemMonitor *monitor = MemMonitor::acquire(&ctx->rcache_off);
  if (monitor == nullptr) return;
  RegCache::Limits limits;
  rlimit lim{};
  // Cached pins count against the locked-memory limit: keep half of it for everything else.
  if (getrlimit(RLIMIT_MEMLOCK, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    limits.max_bytes = std::min<size_t>(limits.max_bytes, lim.rlim_cur / 2);
  ctx->rcache = new RegCache(ctx->pd, monitor, limits, ctx->opt.direct);
}

// Receive and bounce buffers go on the NUMA node nearest the HCA (the core's hwloc topology
// knows it); a device without a PCI parent (soft-RoCE) has no node, and then they follow the
// rank's own node.
void place_buffers(Context *ctx, const braid_transport_init_args_t *args) {
  ctx->alloc_on_node = args->alloc_on_node;
  ctx->free_on_node = args->free_on_node;
  if (ctx->alloc_on_node == nullptr || ctx->free_on_node == nullptr) {
    ctx->alloc_on_node = nullptr;
    ctx->free_on_node = nullptr;
  }
  int hca =
      args->device_numa_node != nullptr ? args->device_numa_node(ctx->device_name.c_str()) : -1;
  if (hca >= 0) {
    ctx->numa_node = hca;
    ctx->numa_reason = "nearest " + ctx->device_name;
  } else {
    ctx->numa_node = args->numa_node;
    ctx->numa_reason =
        ctx->device_name + " has no NUMA node (no PCI parent); " +
        (args->numa_node >= 0 ? "the rank's node" : "the rank is unbound: first touch");
  }
}

int create_cq(Context *ctx) {
  // Room for every work request that can be outstanding at once, so the CQ cannot overrun.
  long entries = 0;
  const long peers = ctx->size - 1;
  for (const ClassState &cls : ctx->classes) {
    entries += peers * ctx->opt.sq_depth;
    entries += cls.srq != nullptr ? cls.srq_max_wr : peers * cls.spec.count;
  }
  if (entries < 16) entries = 16;
  if (entries > ctx->dev_attr.max_cqe)
    return ctx->error(BRAID_ERR_INVALID_ARGUMENT,
                      "verbs: rank %d: %ld completion queue entries are needed for %d ranks but %s "
                      "allows %d: use shared receive queues (S,...) or fewer buffers",
                      ctx->rank, entries, ctx->size, ctx->device_name.c_str(),
                      ctx->dev_attr.max_cqe);
  ctx->comp_channel = ibv_create_comp_channel(ctx->verbs);
  if (ctx->comp_channel == nullptr)
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: ibv_create_comp_channel: %s",
                      std::strerror(errno));
  ctx->cq = ibv_create_cq(ctx->verbs, static_cast<int>(entries), nullptr, ctx->comp_channel, 0);
  if (ctx->cq == nullptr)
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: ibv_create_cq(%ld): %s", ctx->rank,
                      entries, std::strerror(errno));
  ctx->cq_entries = static_cast<int>(entries);
  return BRAID_SUCCESS;
}

int setup(Context *ctx, const braid_transport_init_args_t *args) {
  std::string why;
  if (!parse_options(process_env, &ctx->opt, &why))
    return ctx->error(BRAID_ERR_INVALID_ARGUMENT, "verbs: %s", why.c_str());
  int rc = open_device(ctx);
  if (rc != BRAID_SUCCESS) return rc;
  open_rcache(ctx);
  place_buffers(ctx, args);
  if (ctx->size > 1 && static_cast<size_t>(ctx->size) * ctx->opt.queues.size() > kMaxConnections)
    return ctx->error(BRAID_ERR_INVALID_ARGUMENT, "verbs: %d ranks x %zu classes is too many QPs",
                      ctx->size, ctx->opt.queues.size());
  rc = classes_create(ctx);
  if (rc != BRAID_SUCCESS) return rc;
  size_t largest = ctx->classes.back().slot_bytes - sizeof(Header);
  ctx->eager_limit =
      ctx->opt.eager_limit > 0 && ctx->opt.eager_limit < largest ? ctx->opt.eager_limit : largest;
  rc = create_cq(ctx);
  if (rc != BRAID_SUCCESS) return rc;
  ctx->conns.resize(static_cast<size_t>(ctx->size) * ctx->classes.size());
  for (size_t i = 0; i < ctx->conns.size(); ++i) {
    Conn &c = ctx->conns[i];
    c.index = static_cast<uint32_t>(i);
    c.peer = static_cast<int>(i / ctx->classes.size());
    c.klass = static_cast<uint8_t>(i % ctx->classes.size());
    c.per_peer = ctx->classes[c.klass].spec.kind == QueueKind::PerPeer;
  }
  ctx->peers.resize(static_cast<size_t>(ctx->size));
  ctx->max_inline = UINT32_MAX;
  rc = connect_all(ctx, args->bootstrap);
  if (rc != BRAID_SUCCESS) return rc;
  if (ctx->max_inline == UINT32_MAX) ctx->max_inline = 0;
  plan_fast_inline(ctx);
  ctx->logf(1,
            "verbs: %s:%d at %s, receive queues %s, eager limit %zu, inline %u, max_msg_sz %llu, "
            "%llu bytes of receive buffers, %llu of bounce buffers, on NUMA node %d (%s), "
            "registration cache %s%s",
            ctx->device_name.c_str(), ctx->port, ctx->address_text.c_str(),
            format_recv_queues(ctx->opt.queues).c_str(), ctx->eager_limit, ctx->max_inline,
            static_cast<unsigned long long>(ctx->max_msg_sz),
            static_cast<unsigned long long>(ctx->counters.recv_buffer_bytes),
            static_cast<unsigned long long>(ctx->counters.send_buffer_bytes), ctx->numa_node,
            ctx->numa_reason.c_str(),
            ctx->rcache != nullptr ? "on" : "off: ", ctx->rcache_off.c_str());
  return args->bootstrap->barrier(args->bootstrap->ctx);
}

}  // namespace

int context_create(const braid_transport_init_args_t *args, Context **out) {
  auto *ctx = new Context;
  ctx->rank = args->bootstrap->rank;
  ctx->size = args->bootstrap->size;
  ctx->timeout_s = args->timeout_s > 0 ? args->timeout_s : 30;
  ctx->err = args->err;
  ctx->err_len = args->err_len;
  ctx->log = args->log;
  int rc = setup(ctx, args);
  if (rc != BRAID_SUCCESS) {
    // Keep the message: teardown must not overwrite it.
    std::string message = ctx->err != nullptr ? ctx->err : "";
    context_destroy(ctx);
    if (args->err != nullptr && args->err_len > 0)
      std::snprintf(args->err, args->err_len, "%s", message.c_str());
    return rc;
  }
  *out = ctx;
  return BRAID_SUCCESS;
}

void context_destroy(Context *ctx) {
  ctx->finalizing = true;
  for (Conn &c : ctx->conns)
    if (c.id != nullptr && c.established) rdma_disconnect(c.id);
  for (Conn &c : ctx->conns) {
    if (c.id == nullptr) continue;
    if (c.qp != nullptr) rdma_destroy_qp(c.id);
    rdma_destroy_id(c.id);
  }
  // After the QPs are gone: rdma_disconnect only moves them to the error state, where a READ
  // or send posted from a user buffer may still be flushing (nobody polls its completion now).
  for (size_t i = 0; i < ctx->requests.size(); ++i)
    release_transient(ctx->requests.at(static_cast<uint32_t>(i)));
  classes_destroy(ctx);
  // Every CQ event taken was acknowledged at once, so ibv_destroy_cq cannot block.
  if (ctx->cq != nullptr) ibv_destroy_cq(ctx->cq);
  if (ctx->comp_channel != nullptr) ibv_destroy_comp_channel(ctx->comp_channel);
  // After the QPs: no READ can still be writing into a cached registration.
  delete ctx->rcache;
  if (ctx->pd != nullptr) ibv_dealloc_pd(ctx->pd);
  if (ctx->listen_id != nullptr) rdma_destroy_id(ctx->listen_id);
  if (ctx->channel != nullptr) rdma_destroy_event_channel(ctx->channel);
  delete ctx;
}

}  // namespace braid::verbs
