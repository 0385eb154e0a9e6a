#include "queues.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "memory.hpp"
#include "wr_id.hpp"

namespace braid::verbs {
namespace {

constexpr size_t kPostBatch = 64;         // WRs per linked list
constexpr unsigned kRepostBatchMax = 16;  // see Context::repost_batch
constexpr uint32_t kSrqGrowthFactor = 4;  // an SRQ may grow to 4x its configured count

// Posts `slots` of class `k` to `qp` (per-peer) or to the class's SRQ as linked lists. When the
// provider stops at bad_wr, the WRs before it are posted; the rest is posted once more and a
// second failure is an error naming the WR.
int post_slots(Context *ctx, uint8_t k, ibv_qp *qp, uint32_t conn_index,
               const std::vector<uint32_t> &slots, size_t *posted_count = nullptr) {
  ClassState &cls = ctx->classes[k];
  // On the stack: this runs after every received message, where an allocation is latency.
  std::array<ibv_recv_wr, kPostBatch> wrs;  // every field is set below before use
  std::array<ibv_sge, kPostBatch> sges;
  size_t done = 0;
  if (posted_count != nullptr) *posted_count = 0;
  bool retried = false;
  while (done < slots.size()) {
    size_t n = std::min(slots.size() - done, kPostBatch);
    for (size_t i = 0; i < n; ++i) {
      uint32_t slot = slots[done + i];
      sges[i] = ibv_sge{reinterpret_cast<uint64_t>(cls.recv_slot(slot)), cls.slot_bytes,
                        cls.recv_lkey(slot)};
      wrs[i].wr_id = encode_wr_id(WrKind::Recv, k, conn_index, slot);
      wrs[i].sg_list = &sges[i];
      wrs[i].num_sge = 1;
      wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
    }
    ibv_recv_wr *bad = nullptr;
    int rc = qp != nullptr ? ibv_post_recv(qp, wrs.data(), &bad)
                           : ibv_post_srq_recv(cls.srq, wrs.data(), &bad);
    // bad_wr is the first WR not posted; a provider that leaves it unset posted none.
    size_t posted = n;
    if (rc != 0) {
      bool inside = bad != nullptr && bad >= wrs.data() && bad < wrs.data() + n;
      posted = inside ? static_cast<size_t>(bad - wrs.data()) : 0;
    }
    done += posted;
    if (posted_count != nullptr) *posted_count = done;
    ctx->counters.recvs_posted += posted;
    if (qp == nullptr) cls.srq_posted += static_cast<uint32_t>(posted);
    if (rc == 0) continue;
    if (!retried && posted < n) {
      retried = true;
      ++ctx->counters.recv_post_retries;
      continue;
    }
    uint32_t slot = slots[done];
    return ctx->error(BRAID_ERR_TRANSPORT,
                      "verbs: rank %d: %s of receive buffer %u (class %u, %u bytes) failed after "
                      "%zu of %zu were posted: %s",
                      ctx->rank, qp != nullptr ? "ibv_post_recv" : "ibv_post_srq_recv", slot, k,
                      cls.slot_bytes, done, slots.size(), std::strerror(rc));
  }
  return BRAID_SUCCESS;
}

int add_srq_arena(Context *ctx, uint8_t k) {
  ClassState &cls = ctx->classes[k];
  Arena arena;
  size_t bytes = size_t{cls.spec.count} * cls.slot_bytes;
  int rc = arena_create(ctx, bytes, IBV_ACCESS_LOCAL_WRITE, "shared receive buffers", &arena);
  if (rc != BRAID_SUCCESS) return rc;
  uint32_t first = static_cast<uint32_t>(cls.recv.size()) * cls.spec.count;
  cls.recv.push_back(arena);
  ctx->counters.recv_buffer_bytes += arena.bytes;
  std::vector<uint32_t> slots(cls.spec.count);
  for (uint32_t i = 0; i < cls.spec.count; ++i) slots[i] = first + i;
  cls.srq_slots += cls.spec.count;
  return post_slots(ctx, k, nullptr, 0, slots);
}

int arm_srq(Context *ctx, uint8_t k) {
  ClassState &cls = ctx->classes[k];
  ibv_srq_attr attr{};
  attr.srq_limit = cls.srq_limit;
  int rc = ibv_modify_srq(cls.srq, &attr, IBV_SRQ_LIMIT);
  if (rc != 0)
    return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: ibv_modify_srq(srq_limit=%u): %s",
                      ctx->rank, cls.srq_limit, std::strerror(rc));
  return BRAID_SUCCESS;
}

}  // namespace

int classes_create(Context *ctx) {
  const size_t peers = static_cast<size_t>(ctx->size > 1 ? ctx->size - 1 : 0);
  ctx->classes.resize(ctx->opt.queues.size());
  for (size_t k = 0; k < ctx->classes.size(); ++k) {
    ClassState &cls = ctx->classes[k];
    cls.spec = ctx->opt.queues[k];
    cls.slot_bytes = cls.spec.bytes;
    int rc;
    if (cls.spec.kind == QueueKind::PerPeer) {
      if (peers > 0) {
        Arena arena;
        rc = arena_create(ctx, peers * cls.spec.count * cls.slot_bytes, IBV_ACCESS_LOCAL_WRITE,
                          "per-peer receive buffers", &arena);
        if (rc != BRAID_SUCCESS) return rc;
        // recv_slot() indexes arenas by slot / count; one arena holds every peer's buffers, so
        // the same arena is listed once per peer.
        for (size_t p = 0; p < peers; ++p) {
          Arena view = arena;
          view.base = arena.base + p * cls.spec.count * cls.slot_bytes;
          cls.recv.push_back(view);
        }
        ctx->counters.recv_buffer_bytes += arena.bytes;
      }
    } else {
      uint32_t max_wr = cls.spec.count * kSrqGrowthFactor;
      if (max_wr > static_cast<uint32_t>(ctx->dev_attr.max_srq_wr))
        max_wr = static_cast<uint32_t>(ctx->dev_attr.max_srq_wr);
      if (max_wr < cls.spec.count)
        return ctx->error(BRAID_ERR_INVALID_ARGUMENT,
                          "verbs: rank %d: shared class %zu asks for %u buffers but %s allows at "
                          "most %d per SRQ",
                          ctx->rank, k, cls.spec.count, ctx->device_name.c_str(),
                          ctx->dev_attr.max_srq_wr);
      ibv_srq_init_attr init{};
      init.attr.max_wr = max_wr;
      init.attr.max_sge = 1;
      cls.srq = ibv_create_srq(ctx->pd, &init);
      if (cls.srq == nullptr)
        return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: ibv_create_srq(max_wr=%u): %s",
                          ctx->rank, max_wr, std::strerror(errno));
      cls.srq->srq_context = reinterpret_cast<void *>(k);
      cls.srq_max_wr = init.attr.max_wr;
      // Low watermark at a quarter: the async event comes while a burst still has buffers.
      cls.srq_limit = cls.spec.count / 4 > 0 ? cls.spec.count / 4 : 1;
      rc = add_srq_arena(ctx, static_cast<uint8_t>(k));
      if (rc != BRAID_SUCCESS) return rc;
      rc = arm_srq(ctx, static_cast<uint8_t>(k));
      if (rc != BRAID_SUCCESS) return rc;
    }
    rc = arena_create(ctx, size_t{ctx->opt.send_slots} * cls.slot_bytes, 0, "send bounce buffers",
                      &cls.send);
    if (rc != BRAID_SUCCESS) return rc;
    ctx->counters.send_buffer_bytes += cls.send.bytes;
    for (uint32_t i = ctx->opt.send_slots; i > 0; --i) cls.send_free.push_back(i - 1);
  }
  // Reposts wait for a batch of at most a quarter of the smallest class (16 at most) while
  // messages keep arriving: an SRQ keeps three quarters posted (its limit event fires below
  // one), a per-peer sender keeps credits for three quarters of its window.
  ctx->repost_batch = kRepostBatchMax;
  for (const ClassState &cls : ctx->classes)
    ctx->repost_batch = std::min<unsigned>(ctx->repost_batch, std::max(1u, cls.spec.count / 4));
  return BRAID_SUCCESS;
}

void classes_destroy(Context *ctx) {
  for (ClassState &cls : ctx->classes) {
    if (cls.srq != nullptr) ibv_destroy_srq(cls.srq);
    if (cls.spec.kind == QueueKind::PerPeer) {
      if (!cls.recv.empty()) {  // the views share the first one's registration
        Arena whole = cls.recv.front();
        whole.bytes = cls.recv.size() * size_t{cls.spec.count} * cls.slot_bytes;
        whole.bytes = (whole.bytes + 4095) / 4096 * 4096;
        arena_destroy(ctx, &whole);
      }
    } else {
      for (Arena &a : cls.recv) arena_destroy(ctx, &a);
    }
    arena_destroy(ctx, &cls.send);
  }
  ctx->classes.clear();
}

int post_initial_receives(Context *ctx, Conn &conn) {
  ClassState &cls = ctx->classes[conn.klass];
  std::vector<uint32_t> slots(cls.spec.count);
  uint32_t first = ctx->peer_slot_index(conn.peer) * cls.spec.count;
  for (uint32_t i = 0; i < cls.spec.count; ++i) slots[i] = first + i;
  return post_slots(ctx, conn.klass, conn.qp, conn.index, slots);
}

namespace {

// What flush_reposts leaves listed: a shared class's buffers the provider did not take, and,
// after a failure, every list it did not reach.
unsigned queued_reposts(const Context *ctx) {
  size_t n = 0;
  for (const ClassState &cls : ctx->classes) n += cls.srq_repost.size();
  for (const Conn &conn : ctx->conns) n += conn.repost.size();
  return static_cast<unsigned>(n);
}

}  // namespace

int flush_reposts(Context *ctx) {
  if (ctx->reposts_queued == 0) return BRAID_SUCCESS;
  ctx->reposts_queued = 0;  // what stays listed is counted again below
  for (size_t k = 0; k < ctx->classes.size(); ++k) {
    ClassState &cls = ctx->classes[k];
    if (cls.srq == nullptr || cls.srq_repost.empty()) continue;
    // Posted from the list in place and cleared, not swapped out: the list keeps its capacity
    // and the next message's push_back does not allocate.
    size_t posted = 0;
    int rc = post_slots(ctx, static_cast<uint8_t>(k), nullptr, 0, cls.srq_repost, &posted);
    // The buffers the provider did not take (from bad_wr on) stay listed for the next flush.
    cls.srq_repost.erase(cls.srq_repost.begin(),
                         cls.srq_repost.begin() + static_cast<std::ptrdiff_t>(posted));
    if (rc != BRAID_SUCCESS) {
      ctx->reposts_queued = queued_reposts(ctx);
      return rc;
    }
    ctx->reposts_queued += static_cast<unsigned>(cls.srq_repost.size());
  }
  for (Conn &conn : ctx->conns) {
    if (conn.repost.empty()) continue;
    if (ctx->peers[static_cast<size_t>(conn.peer)].failed != 0) {
      conn.repost.clear();
      continue;
    }
    int rc = post_slots(ctx, conn.klass, conn.qp, conn.index, conn.repost);
    conn.repost.clear();
    if (rc != BRAID_SUCCESS) {
      // The credits owed for these buffers cannot be returned: the peer would send into
      // buffers that are not posted (RNR, fatal without retries). Only this peer's traffic is
      // lost; the others carry on.
      fail_peer_after(ctx, conn.peer, rc, "verbs: ibv_post_recv failed");
      continue;
    }
    conn.pending_return += conn.owed_return;
    conn.pending_cm_ack += conn.owed_cm_ack;
    conn.owed_return = 0;
    conn.owed_cm_ack = 0;
    ctx->sends_to_flush = true;  // the credits may be due in a message of their own
  }
  return BRAID_SUCCESS;
}

int on_srq_limit(Context *ctx, ibv_srq *srq) {
  uint8_t k = static_cast<uint8_t>(reinterpret_cast<uintptr_t>(srq->srq_context));
  if (k >= ctx->classes.size() || ctx->classes[k].srq != srq) return BRAID_SUCCESS;
  ClassState &cls = ctx->classes[k];
  ++ctx->counters.srq_limit_events;
  // Buffers already processed go back first; then, since traffic came close to outgrowing the
  // queue, a whole arena is added while the SRQ has room. Growing is optional: when it fails
  // (locked memory used up) the queue keeps what it has, and is armed again either way, or the
  // next burst would find it dry with no event to say so.
  int rc = flush_reposts(ctx);
  if (rc == BRAID_SUCCESS && !cls.srq_grow_failed &&
      cls.srq_slots + cls.spec.count <= cls.srq_max_wr) {
    if (add_srq_arena(ctx, k) == BRAID_SUCCESS) {
      ++ctx->counters.srq_grows;
      ctx->logf(1,
                "verbs: SRQ of class %u (%u-byte buffers) reached its limit: grown to %u buffers",
                k, cls.slot_bytes, cls.srq_slots);
    } else {
      cls.srq_grow_failed = true;  // each limit event would try, and warn, again
      ctx->logf(0,
                "verbs: SRQ of class %u (%u-byte buffers) reached its limit and could not grow "
                "past %u buffers: %s",
                k, cls.slot_bytes, cls.srq_slots, ctx->err != nullptr ? ctx->err : "");
    }
  }
  int armed = arm_srq(ctx, k);
  return rc != BRAID_SUCCESS ? rc : armed;
}

}  // namespace braid::verbs
