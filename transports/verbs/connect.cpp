#include "connect.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "device.hpp"
#include "queues.hpp"
#include "send.hpp"

namespace braid::verbs {
namespace {

constexpr uint32_t kMagic = 0x42525642;  // "BVRB"
constexpr uint16_t kWireVersion = 1;
constexpr int kResolveTimeoutMs = 5000;

// What every rank publishes over the bootstrap.
struct Endpoint {
  sockaddr_storage address;
  uint64_t cookie;   // rank 0's is the job's: connection requests must carry it
  char queues[160];  // the receive spec: every rank must use the same classes
};

// rdma_cm private data of a connection request.
struct Hello {
  uint32_t magic;
  uint16_t version;
  uint8_t klass;
  uint8_t class_count;
  uint32_t rank;
  uint32_t size;
  uint64_t cookie;
};
static_assert(sizeof(Hello) <= 56, "rdma_connect private data is limited to 56 bytes");

void set_port(sockaddr_storage *sa, uint16_t port) {
  if (sa->ss_family == AF_INET)
    reinterpret_cast<sockaddr_in *>(sa)->sin_port = htons(port);
  else
    reinterpret_cast<sockaddr_in6 *>(sa)->sin6_port = htons(port);
}

rdma_conn_param conn_param(const Context *ctx, const Conn &conn, const Hello *hello) {
  rdma_conn_param p{};
  p.private_data = hello;
  p.private_data_len = hello != nullptr ? sizeof *hello : 0;
  p.responder_resources = static_cast<uint8_t>(std::min(ctx->dev_attr.max_qp_rd_atom, 16));
  p.initiator_depth = static_cast<uint8_t>(std::min(ctx->dev_attr.max_qp_init_rd_atom, 16));
  p.retry_count = 7;
  // Per-peer classes never need an RNR retry (credits); shared ones wait for the SRQ refill.
  p.rnr_retry_count = static_cast<uint8_t>(conn.per_peer ? ctx->opt.rnr_retry : 7);
  return p;
}

// The RNR NAK timer this side asks a sender to wait before it retries a message that found no
// receive posted: 12 encodes 0.64 ms (InfiniBand's table). rdma_cm leaves the kernel's 0, which
// encodes the longest wait, 655 ms, a stall per retry wherever a shared receive queue runs dry
// under a burst (shared classes have no credits; per-peer ones never see RNR). Set once the QP
// is established: rdma_cm drives it to RTS itself, and RTS to RTS may change the timer.
constexpr uint8_t kMinRnrTimer = 12;

void shorten_rnr_timer(Context *ctx, const Conn &conn) {
  ++ctx->counters.qps;
  ibv_qp_attr attr{};
  attr.min_rnr_timer = kMinRnrTimer;
  if (int rc = ibv_modify_qp(conn.qp, &attr, IBV_QP_MIN_RNR_TIMER); rc != 0) {
    ctx->logf(1,
              "verbs: rank %d: the RNR NAK timer of the QP to rank %d (class %u) stays at "
              "655 ms: ibv_modify_qp: %s",
              ctx->rank, conn.peer, conn.klass, std::strerror(rc));
    return;
  }
  // Counted as the device reports it back, for the tests.
  ibv_qp_attr now{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(conn.qp, &now, IBV_QP_MIN_RNR_TIMER, &init) == 0 &&
      now.min_rnr_timer == kMinRnrTimer)
    ++ctx->counters.short_rnr_timer_qps;
}

int create_qp(Context *ctx, Conn &conn, rdma_cm_id *id) {
  if (id->verbs != ctx->verbs)
    return ctx->error(BRAID_ERR_TRANSPORT,
                      "verbs: rank %d: the connection with rank %d resolved to another device than "
                      "%s; set BRAID_VERBS_DEVICE",
                      ctx->rank, conn.peer, ctx->device_name.c_str());
  ClassState &cls = ctx->classes[conn.klass];
  ibv_qp_init_attr attr{};
  attr.send_cq = ctx->cq;
  attr.recv_cq = ctx->cq;
  attr.srq = cls.srq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = ctx->opt.sq_depth;
  attr.cap.max_recv_wr = cls.srq != nullptr ? 0 : cls.spec.count;
  attr.cap.max_send_sge = 2;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = 128;
  if (rdma_create_qp(id, ctx->pd, &attr) != 0) {
    attr.cap.max_inline_data = 0;  // the device has no inline sends
    if (rdma_create_qp(id, ctx->pd, &attr) != 0)
      return ctx->error(BRAID_ERR_TRANSPORT,
                        "verbs: rank %d: rdma_create_qp for rank %d (class %u, %u send WRs, %u "
                        "receive WRs): %s",
                        ctx->rank, conn.peer, conn.klass, ctx->opt.sq_depth, attr.cap.max_recv_wr,
                        std::strerror(errno));
  }
  conn.id = id;
  conn.qp = id->qp;
  conn.sq_free = static_cast<int>(ctx->opt.sq_depth);
  if (ctx->max_inline == UINT32_MAX || attr.cap.max_inline_data < ctx->max_inline)
    ctx->max_inline = attr.cap.max_inline_data;
  ctx->qpn_to_conn[conn.qp->qp_num] = conn.index;
  if (conn.per_peer) {
    conn.send_credits = initial_credits(cls.spec);
    conn.cm_budget = kReservedCreditBuffers;
    return post_initial_receives(ctx, conn);
  }
  return BRAID_SUCCESS;
}

int exchange(Context *ctx, const braid_bootstrap_t *bs, std::vector<Endpoint> *all) {
  Endpoint mine{};
  std::memcpy(&mine.address, &ctx->address, sizeof mine.address);
  mine.cookie = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  std::snprintf(mine.queues, sizeof mine.queues, "%s", format_recv_queues(ctx->opt.queues).c_str());
  all->resize(static_cast<size_t>(ctx->size));
  int rc = bs->allgather(bs->ctx, &mine, all->data(), sizeof mine);
  if (rc != BRAID_SUCCESS)
    return ctx->error(rc, "verbs: rank %d: exchanging rdma_cm addresses over the bootstrap failed",
                      ctx->rank);
  for (int r = 0; r < ctx->size; ++r) {
    Endpoint &e = (*all)[static_cast<size_t>(r)];
    e.queues[sizeof e.queues - 1] = '\0';
    if (std::strcmp(e.queues, mine.queues) != 0)
      return ctx->error(BRAID_ERR_INVALID_ARGUMENT,
                        "verbs: rank %d uses BRAID_VERBS_RECV_QUEUES=%s but rank %d uses %s: every "
                        "rank must use the same receive queues",
                        ctx->rank, mine.queues, r, e.queues);
  }
  return BRAID_SUCCESS;
}

struct Setup {
  Context *ctx;
  const std::vector<Endpoint> *peers;
  uint64_t cookie;
  int established = 0;
  rdma_cm_id *rejected = nullptr;  // destroyed once its event is acknowledged
};

Hello hello_for(const Setup &s, const Conn &conn) {
  Hello h{};
  h.magic = kMagic;
  h.version = kWireVersion;
  h.klass = conn.klass;
  h.class_count = static_cast<uint8_t>(s.ctx->classes.size());
  h.rank = static_cast<uint32_t>(s.ctx->rank);
  h.size = static_cast<uint32_t>(s.ctx->size);
  h.cookie = s.cookie;
  return h;
}

// A connection request: checked against the job (cookie, rank, class) before anything is
// allocated for it; a stranger is rejected and logged.
int on_connect_request(Setup &s, rdma_cm_event *ev) {
  Context *ctx = s.ctx;
  Hello h{};
  const char *why = nullptr;
  if (ev->param.conn.private_data == nullptr || ev->param.conn.private_data_len < sizeof h) {
    why = "no braid hello";
  } else {
    std::memcpy(&h, ev->param.conn.private_data, sizeof h);
    if (h.magic != kMagic || h.version != kWireVersion)
      why = "not a braid verbs hello (or another wire version)";
    else if (h.cookie != s.cookie)
      why = "a hello from another job";
    else if (h.size != static_cast<uint32_t>(ctx->size) || h.rank >= h.size ||
             static_cast<int>(h.rank) <= ctx->rank)
      why = "a hello with an impossible rank";
    else if (h.class_count != ctx->classes.size() || h.klass >= ctx->classes.size())
      why = "a hello with an unknown size class";
    else if (ctx->conn(static_cast<int>(h.rank), h.klass).id != nullptr)
      why = "a second hello for a connection already made";
  }
  if (why != nullptr) {
    ctx->logf(0, "verbs: rank %d: rejected an rdma_cm connection request: %s", ctx->rank, why);
    rdma_reject(ev->id, nullptr, 0);
    s.rejected = ev->id;
    return BRAID_SUCCESS;
  }
  Conn &conn = ctx->conn(static_cast<int>(h.rank), h.klass);
  ev->id->context = reinterpret_cast<void *>(uintptr_t{conn.index} + 1);
  int rc = create_qp(ctx, conn, ev->id);
  if (rc != BRAID_SUCCESS) {
    rdma_reject(ev->id, nullptr, 0);
    s.rejected = ev->id;  // destroyed once the event is acknowledged, as any rejected request
    return rc;
  }
  Hello reply = hello_for(s, conn);
  rdma_conn_param p = conn_param(ctx, conn, &reply);
  p.responder_resources = std::min(p.responder_resources, ev->param.conn.initiator_depth);
  p.initiator_depth = std::min(p.initiator_depth, ev->param.conn.responder_resources);
  if (rdma_accept(ev->id, &p) != 0)
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: rdma_accept from rank %d: %s",
                      ctx->rank, conn.peer, std::strerror(errno));
  return BRAID_SUCCESS;
}

int on_event(Setup &s, rdma_cm_event *ev) {
  Context *ctx = s.ctx;
  if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) return on_connect_request(s, ev);
  auto index = reinterpret_cast<uintptr_t>(ev->id->context);
  if (index == 0 || index > ctx->conns.size()) return BRAID_SUCCESS;
  Conn &conn = ctx->conns[index - 1];
  const sockaddr *peer_addr =
      reinterpret_cast<const sockaddr *>(&(*s.peers)[static_cast<size_t>(conn.peer)].address);
  switch (ev->event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (rdma_resolve_route(conn.id, kResolveTimeoutMs) != 0)
        return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: rdma_resolve_route to rank %d: %s",
                          ctx->rank, conn.peer, std::strerror(errno));
      return BRAID_SUCCESS;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
      int rc = create_qp(ctx, conn, conn.id);
      if (rc != BRAID_SUCCESS) return rc;
      Hello h = hello_for(s, conn);
      rdma_conn_param p = conn_param(ctx, conn, &h);
      if (rdma_connect(conn.id, &p) != 0)
        return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: rdma_connect to rank %d: %s",
                          ctx->rank, conn.peer, std::strerror(errno));
      return BRAID_SUCCESS;
    }
    case RDMA_CM_EVENT_ESTABLISHED:
      if (!conn.established) {
        ++s.established;
        shorten_rnr_timer(ctx, conn);
      }
      conn.established = true;
      return BRAID_SUCCESS;
    default:
      return ctx->error(BRAID_ERR_TRANSPORT,
                        "verbs: rank %d: connecting to rank %d (class %u) at %s: rdma_cm %s "
                        "(status %d)",
                        ctx->rank, conn.peer, conn.klass, sockaddr_text(peer_addr).c_str(),
                        rdma_event_str(ev->event), ev->status);
  }
}

}  // namespace

int listen_on_device(Context *ctx) {
  ctx->channel = rdma_create_event_channel();
  if (ctx->channel == nullptr)
    return ctx->error(BRAID_ERR_TRANSPORT,
                      "verbs: rdma_create_event_channel: %s (is rdma_ucm loaded?)",
                      std::strerror(errno));
  int flags = fcntl(ctx->channel->fd, F_GETFL);
  fcntl(ctx->channel->fd, F_SETFL, flags | O_NONBLOCK);
  if (rdma_create_id(ctx->channel, &ctx->listen_id, nullptr, RDMA_PS_TCP) != 0)
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rdma_create_id: %s", std::strerror(errno));
  set_port(&ctx->address, 0);
  if (rdma_bind_addr(ctx->listen_id, reinterpret_cast<sockaddr *>(&ctx->address)) != 0)
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: rdma_bind_addr(%s): %s", ctx->rank,
                      ctx->address_text.c_str(), std::strerror(errno));
  // Every peer may ask for a connection of every class at once (iWARP's connection manager
  // refuses what is past the backlog); 128 is the least. The kernel caps it at
  // net.rdma_ucm.max_backlog (1024 by default).
  const size_t requests =
      static_cast<size_t>(ctx->size > 1 ? ctx->size - 1 : 0) * ctx->opt.queues.size();
  const int backlog = static_cast<int>(std::clamp<size_t>(requests, 128, 65536));
  if (rdma_listen(ctx->listen_id, backlog) != 0)
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: rdma_listen on %s: %s", ctx->rank,
                      ctx->address_text.c_str(), std::strerror(errno));
  set_port(&ctx->address, ntohs(rdma_get_src_port(ctx->listen_id)));
  ctx->address_text = sockaddr_text(reinterpret_cast<sockaddr *>(&ctx->address));
  ctx->verbs = ctx->listen_id->verbs;
  return BRAID_SUCCESS;
}

int connect_all(Context *ctx, const braid_bootstrap_t *bs) {
  std::vector<Endpoint> endpoints;
  int rc = exchange(ctx, bs, &endpoints);
  if (rc != BRAID_SUCCESS) return rc;
  Setup s{ctx, &endpoints, endpoints[0].cookie, 0};
  const int classes = static_cast<int>(ctx->classes.size());
  for (int peer = 0; peer < ctx->rank; ++peer) {
    for (int k = 0; k < classes; ++k) {
      Conn &conn = ctx->conn(peer, k);
      if (rdma_create_id(ctx->channel, &conn.id,
                         reinterpret_cast<void *>(uintptr_t{conn.index} + 1), RDMA_PS_TCP) != 0)
        return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rdma_create_id: %s", std::strerror(errno));
      sockaddr_storage src = ctx->address;
      set_port(&src, 0);
      sockaddr_storage dst = endpoints[static_cast<size_t>(peer)].address;
      if (rdma_resolve_addr(conn.id, reinterpret_cast<sockaddr *>(&src),
                            reinterpret_cast<sockaddr *>(&dst), kResolveTimeoutMs) != 0)
        return ctx->error(BRAID_ERR_TRANSPORT,
                          "verbs: rank %d: rdma_resolve_addr to rank %d at %s: %s", ctx->rank, peer,
                          sockaddr_text(reinterpret_cast<sockaddr *>(&dst)).c_str(),
                          std::strerror(errno));
    }
  }
  const int expected = (ctx->size - 1) * classes;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(ctx->timeout_s);
  while (s.established < expected) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      std::string missing;
      for (Conn &c : ctx->conns)
        if (c.peer != ctx->rank && !c.established)
          missing += (missing.empty() ? "" : ", ") + std::string("rank ") + std::to_string(c.peer) +
                     " class " + std::to_string(c.klass);
      return ctx->error(BRAID_ERR_TIMEOUT,
                        "verbs: rank %d: rdma_cm connections not established after %.1f s: %s",
                        ctx->rank, ctx->timeout_s, missing.c_str());
    }
    pollfd pfd{ctx->channel->fd, POLLIN, 0};
    poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
    rdma_cm_event *ev = nullptr;
    while (rdma_get_cm_event(ctx->channel, &ev) == 0) {
      rc = on_event(s, ev);
      rdma_ack_cm_event(ev);
      if (s.rejected != nullptr) rdma_destroy_id(s.rejected);
      s.rejected = nullptr;
      if (rc != BRAID_SUCCESS) return rc;
    }
  }
  return BRAID_SUCCESS;
}

}  // namespace braid::verbs
