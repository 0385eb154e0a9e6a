#include "send.hpp"

#include <endian.h>

#include <cstring>

#include "direct.hpp"
#include "inline_send.hpp"
#include "wr_id.hpp"

namespace braid::verbs {
namespace {

size_t body_bytes(const Outgoing &o) {
  switch (o.type) {
    case MsgType::Eager:
    case MsgType::Direct:
    case MsgType::Headerless:
      return o.detached_payload ? o.detached.size() : o.req->bytes;
    case MsgType::Rts:
      return sizeof(RtsBody);
    case MsgType::Fin:
      return sizeof(FinBody);
    case MsgType::Credit:
      return 0;
    case MsgType::Advert:
      return sizeof(AdvertBody);
    case MsgType::Retract:
    case MsgType::RetractAck:
      return sizeof(RetractBody);
  }
  return 0;
}

const void *body_data(const Outgoing &o, RtsBody *rts) {
  switch (o.type) {
    case MsgType::Eager:
    case MsgType::Direct:
    case MsgType::Headerless:
      return o.detached_payload ? o.detached.data() : o.req->buf;
    case MsgType::Rts:
      *rts = o.rts;
      return rts;
    case MsgType::Fin:
      return &o.fin;
    case MsgType::Credit:
      return nullptr;
    case MsgType::Advert:
      return &o.advert;
    case MsgType::Retract:
    case MsgType::RetractAck:
      return &o.retract;
  }
  return nullptr;
}

// Whether `conn` can post one more message now; counts the stall the first time it cannot.
bool can_post(Context *ctx, Conn &conn, Outgoing &o, bool needs_bounce) {
  const bool credit_msg = o.type == MsgType::Credit;
  uint64_t *stall = nullptr;
  if (conn.sq_free == 0 || (needs_bounce && ctx->classes[conn.klass].send_free.empty()))
    stall = &ctx->counters.send_stalls;
  else if (conn.per_peer && (credit_msg ? conn.cm_budget == 0 : conn.send_credits == 0))
    stall = &ctx->counters.credit_stalls;
  if (stall == nullptr) return true;
  if (!o.stalled) ++*stall;
  o.stalled = true;
  return false;
}

// A direct message (direct.hpp): the payload is RDMA WRITTEN from a bounce buffer into the
// advertised receive, with the msn and the advert's serial as immediate data. It consumes a
// receive WR (and a credit) at the peer like a send, but carries no header, so the credits this
// side owes the peer wait for the next message that has one.
int post_direct(Context *ctx, Conn &conn, Outgoing &o, bool *posted) {
  *posted = false;
  if (!can_post(ctx, conn, o, true)) return BRAID_SUCCESS;
  ClassState &cls = ctx->classes[conn.klass];
  const size_t body = body_bytes(o);
  RtsBody unused{};
  const uint32_t slot = cls.send_free.back();
  uint8_t *buf = cls.send_slot(slot);
  std::memcpy(buf, body_data(o, &unused), body);
  ibv_sge sge{reinterpret_cast<uint64_t>(buf), static_cast<uint32_t>(body), cls.send.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = encode_wr_id(WrKind::SendBounce, conn.klass, conn.index, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htobe32(direct_imm(o.msn, o.direct.serial));
  wr.wr.rdma.remote_addr = o.direct.addr;
  wr.wr.rdma.rkey = o.direct.rkey;
  ibv_send_wr *bad = nullptr;
  int rc = ibv_post_send(conn.qp, &wr, &bad);
  if (rc != 0)
    return ctx->error(BRAID_ERR_TRANSPORT,
                      "verbs: rank %d: ibv_post_send of a %zu-byte RDMA WRITE to rank %d "
                      "(class %u): %s",
                      ctx->rank, body, conn.peer, conn.klass, std::strerror(rc));
  cls.send_free.pop_back();
  --conn.sq_free;
  if (conn.per_peer) --conn.send_credits;
  *posted = true;
  ++ctx->counters.direct_msgs;
  ctx->counters.direct_bytes += body;
  if (o.req != nullptr) o.req->state = ReqState::Done;  // the payload is in the bounce buffer
  return BRAID_SUCCESS;
}

// Posts `o` on `conn` if it has the resources; *posted says whether it did.
int post_one(Context *ctx, Conn &conn, Outgoing &o, bool *posted) {
  if (o.type == MsgType::Direct) return post_direct(ctx, conn, o, posted);
  *posted = false;
  ClassState &cls = ctx->classes[conn.klass];
  // A headerless message carries neither credits nor the acknowledgement of the peer's credit
  // messages (cm_ack), and a peer whose credit messages go unacknowledged runs out of budget for
  // them: in a one-way stream of headerless messages it could return no more credits and both
  // sides would wait. So where a per-peer connection owes that acknowledgement, the message takes
  // its header after all (it fits: its class was chosen with the header counted, and the tag
  // base moves the same way with or without one).
  // Decided when it can go (it needs the same resources either way), so that one that waits
  // for credits keeps its chance to go without a header.
  if (!can_post(ctx, conn, o, false)) return BRAID_SUCCESS;
  if (o.type == MsgType::Headerless && conn.per_peer && conn.pending_cm_ack > 0) {
    o.type = MsgType::Eager;
    ++ctx->counters.headerless_fallbacks;
  }
  // A headerless message is the payload alone, sent with immediate data (wire.hpp).
  const bool headerless = o.type == MsgType::Headerless;
  bool credit_msg = o.type == MsgType::Credit;
  size_t body = body_bytes(o);
  const Header h = header_for(conn, o.type, o.msn, o.tag,
                              o.type == MsgType::Eager ? static_cast<uint32_t>(body) : 0);
  RtsBody rts{};
  const void *data = body_data(o, &rts);
  const size_t head = headerless ? 0 : sizeof h;
  size_t wire = head + body;
  const uint32_t imm = headerless ? headerless_imm(o.msn, o.delta) : 0;

  const bool inline_send = wire <= ctx->max_inline;
  if (inline_send) {
    int rc = post_inline(ctx, conn, headerless ? nullptr : &h, data, body, headerless, imm);
    if (rc != BRAID_SUCCESS) return rc;
  } else {
    if (!can_post(ctx, conn, o, true)) return BRAID_SUCCESS;
    const uint32_t slot = cls.send_free.back();
    uint8_t *buf = cls.send_slot(slot);
    if (!headerless) std::memcpy(buf, &h, sizeof h);
    if (body > 0) std::memcpy(buf + head, data, body);
    ibv_sge sge{reinterpret_cast<uint64_t>(buf), static_cast<uint32_t>(wire), cls.send.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = encode_wr_id(WrKind::SendBounce, conn.klass, conn.index, slot);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.opcode = headerless ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
    wr.imm_data = htobe32(imm);
    ibv_send_wr *bad = nullptr;
    int rc = ibv_post_send(conn.qp, &wr, &bad);
    if (rc != 0) return post_failed(ctx, conn, wire, rc);
    cls.send_free.pop_back();
    --conn.sq_free;
  }
  spend_credit(conn, credit_msg, headerless);
  *posted = true;
  Counters &c = ctx->counters;
  switch (o.type) {
    case MsgType::Headerless:
      ++c.headerless_msgs;
      [[fallthrough]];
    case MsgType::Eager:
      if (inline_send) {
        ++c.inline_msgs;
        c.inline_bytes += body;
      } else {
        ++c.eager_msgs;
        c.eager_bytes += body;
      }
      // The payload is in the WQE or the bounce buffer: the user's buffer is free again.
      if (o.req != nullptr) o.req->state = ReqState::Done;
      break;
    case MsgType::Rts:
      ++c.rndv_msgs;
      c.rndv_bytes += o.rts.length;
      if (o.req != nullptr) o.req->state = ReqState::WaitFin;
      break;
    case MsgType::Credit:
      ++c.credit_msgs;
      ++c.control_msgs;
      break;
    case MsgType::Fin:
      ++c.control_msgs;
      if (o.req != nullptr) o.req->state = ReqState::Done;  // the receive it acknowledges
      break;
    case MsgType::Advert:
    case MsgType::Retract:
    case MsgType::RetractAck:
      ++c.control_msgs;
      break;
    case MsgType::Direct:
      break;  // post_direct
  }
  return BRAID_SUCCESS;
}

int flush_conn(Context *ctx, Conn &conn) {
  while (!conn.backlog.empty()) {
    bool posted = false;
    int rc = post_one(ctx, conn, conn.backlog.front(), &posted);
    if (rc != BRAID_SUCCESS) return rc;
    if (!posted) break;
    conn.backlog.pop_front();
  }
  return BRAID_SUCCESS;
}

}  // namespace

int initial_credits(const QueueSpec &spec) {
  return static_cast<int>(spec.count) - kReservedCreditBuffers;
}

int credit_message_threshold(const Context *ctx, const Conn &conn) {
  const int half = initial_credits(ctx->classes[conn.klass].spec) / 2;
  return half > 0 ? half : 1;
}

bool headerless_fits(const Context *ctx, const PeerState &ps, uint64_t tag, size_t bytes,
                     int *delta) {
  if (!ctx->opt.headerless || !ps.sent_tag) return false;
  // Only where the header costs a packet: a payload that fills its last packet (4 KiB at a
  // 4 KiB MTU) needs one more for the header. Elsewhere the header is free on the wire and
  // carries credits, which a headerless message cannot.
  const int mtu_code = static_cast<int>(ctx->port_attr.active_mtu);
  if (mtu_code < IBV_MTU_256 || mtu_code > IBV_MTU_4096) return false;
  const size_t mtu = size_t{128} << mtu_code;
  if (!header_costs_a_packet(bytes, mtu)) return false;
  const auto d = static_cast<int64_t>(tag - ps.last_sent_tag);
  if (d < kHeaderlessMinDelta || d > kHeaderlessMaxDelta) return false;
  *delta = static_cast<int>(d);
  return true;
}

int class_for(const Context *ctx, size_t wire_bytes) {
  for (size_t k = 0; k < ctx->classes.size(); ++k)
    if (ctx->classes[k].slot_bytes >= wire_bytes) return static_cast<int>(k);
  return -1;
}

void enqueue(Context *ctx, int peer, int klass, Outgoing out) {
  ctx->conn(peer, klass).backlog.push_back(std::move(out));
  ctx->sends_to_flush = true;
}

int send_now(Context *ctx, int peer, int klass, Outgoing out) {
  Conn &conn = ctx->conn(peer, klass);
  // Nothing queued ahead: post it straight away, without a trip through the backlog (a deque
  // that allocates a block every few messages).
  if (conn.backlog.empty()) {
    bool posted = false;
    int rc = post_one(ctx, conn, out, &posted);
    if (rc != BRAID_SUCCESS || posted) return rc;
  }
  enqueue(ctx, peer, klass, std::move(out));
  return BRAID_SUCCESS;
}

int flush_sends(Context *ctx) {
  ctx->sends_to_flush = false;  // set again below by whatever still waits
  for (Conn &conn : ctx->conns) {
    if (conn.qp == nullptr || ctx->peers[static_cast<size_t>(conn.peer)].failed != 0) continue;
    // A post that fails ends this peer's traffic (its message stays at the front, so the
    // connection could never drain), not the other connections' flushing.
    int rc = flush_conn(ctx, conn);
    if (rc != BRAID_SUCCESS) {
      fail_peer_after(ctx, conn.peer, rc, "verbs: ibv_post_send failed");
      continue;
    }
    // Looked at on every turn while messages wait for resources or a credit message is due
    // (it may wait for the peer's budget, which a completion may bring). Credits returned or
    // acknowledged by the peer set it again too (on_receive).
    if (!conn.backlog.empty() ||
        (conn.per_peer && conn.pending_return >= credit_message_threshold(ctx, conn)))
      ctx->sends_to_flush = true;
    // Credits normally ride on our next message. When half the peer's credits are owed and
    // nothing is about to carry them, send them explicitly. An idle connection never sends one
    // for cm_ack alone, so two idle peers cannot bounce credit messages forever.
    if (!conn.per_peer) continue;
    // Stalled for credits while owing the peer the acknowledgement of its credit messages: the
    // peer may be out of budget for them (it has sent two unacknowledged) and so unable to
    // return the credits this side waits for; a direct message, which has no header, cannot
    // carry the acknowledgement. Not an idle bounce: this side has messages waiting.
    if (conn.pending_cm_ack > 0 && conn.send_credits == 0 && !conn.backlog.empty() &&
        conn.cm_budget > 0) {
      Outgoing ack;
      ack.type = MsgType::Credit;
      bool posted = false;
      rc = post_one(ctx, conn, ack, &posted);
      if (rc != BRAID_SUCCESS) fail_peer_after(ctx, conn.peer, rc, "verbs: ibv_post_send failed");
      continue;
    }
    if (conn.pending_return == 0 || conn.pending_return < credit_message_threshold(ctx, conn))
      continue;
    // A direct message carries no header, so no credits; nor does a headerless one unless it
    // takes its header back to carry an acknowledgement (post_one).
    const MsgType front = conn.backlog.empty() ? MsgType::Credit : conn.backlog.front().type;
    const bool carrier_coming = !conn.backlog.empty() && conn.send_credits > 0 &&
                                front != MsgType::Direct &&
                                (front != MsgType::Headerless || conn.pending_cm_ack > 0);
    // The last reserved buffer is kept for a credit message that carries an acknowledgement:
    // two sides that both spent their budget on credits alone, then their send credits on
    // direct messages (no header, so no acknowledgement), would otherwise both wait with
    // nothing able to move; with one buffer left, the stalled side's rule above can send.
    if (carrier_coming || conn.cm_budget == 0 || (conn.cm_budget == 1 && conn.pending_cm_ack == 0))
      continue;
    Outgoing credit;
    credit.type = MsgType::Credit;
    bool posted = false;
    rc = post_one(ctx, conn, credit, &posted);
    if (rc != BRAID_SUCCESS) fail_peer_after(ctx, conn.peer, rc, "verbs: ibv_post_send failed");
  }
  return BRAID_SUCCESS;
}

}  // namespace braid::verbs
