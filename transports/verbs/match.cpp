#include "match.hpp"

#include <cstring>

#include "direct.hpp"
#include "rendezvous.hpp"
#include "send.hpp"

namespace braid::verbs {
namespace {

// Arrivals further ahead than this are not a reordering but a broken or hostile peer.
constexpr uint32_t kReorderWindow = 1u << 20;

std::string tag_text(uint64_t tag) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(tag));
  return buf;
}

// Hands a matchable message to `req`.
int complete_match(Context *ctx, Request *req, MsgType type, const uint8_t *payload, size_t len,
                   const RtsBody &rts) {
  if (type == MsgType::Rts) return start_rendezvous_receive(ctx, req, rts);
  if (len > req->bytes) {
    fail_request(ctx, req, BRAID_ERR_MISMATCH,
                 "verbs: rank " + std::to_string(ctx->rank) + ": the message from rank " +
                     std::to_string(req->peer) + " with tag " + tag_text(req->tag) + " has " +
                     std::to_string(len) + " bytes but the receive buffer holds " +
                     std::to_string(req->bytes));
    return BRAID_SUCCESS;
  }
  if (len > 0) std::memcpy(req->buf, payload, len);
  req->received = len;
  req->state = ReqState::Done;
  return BRAID_SUCCESS;
}

// Matches one in-order message of `peer`.
int deliver(Context *ctx, int peer, MsgType type, uint64_t tag, const uint8_t *payload, size_t len,
            const RtsBody &rts) {
  PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  for (auto it = ps.posted.begin(); it != ps.posted.end(); ++it) {
    if ((*it)->tag != tag) continue;
    Request *req = *it;
    if (it == ps.posted.begin())
      ps.posted.pop_front();  // the usual case, and far cheaper than a deque's erase
    else
      ps.posted.erase(it);
    if (req->advertised) end_advert(ctx, req, false);
    if (req->cancelling) {
      drop_for_cancel(ctx, req, type, rts);
      return BRAID_SUCCESS;
    }
    return complete_match(ctx, req, type, payload, len, rts);
  }
  Stashed s;
  s.type = type;
  s.tag = tag;
  s.rts = rts;
  if (len > 0) s.payload.assign(payload, payload + len);
  ps.unexpected.push_back(std::move(s));
  ++ctx->counters.unexpected_msgs;
  return BRAID_SUCCESS;
}

// A message with a tag (header or headerless) was taken in msn order: the next headerless
// message's tag is a delta from this one.
void saw_tag(PeerState &ps, uint64_t tag) {
  ps.last_recv_tag = tag;
  ps.recv_tag = true;
}

int protocol_error(Context *ctx, Conn &conn, const std::string &why) {
  fail_peer(ctx, conn.peer, BRAID_ERR_TRANSPORT,
            "verbs: rank " + std::to_string(ctx->rank) + ": malformed message from rank " +
                std::to_string(conn.peer) + " (class " + std::to_string(conn.klass) + "): " + why);
  ctx->logf(0, "%s", ctx->peers[static_cast<size_t>(conn.peer)].failure.c_str());
  return BRAID_SUCCESS;
}

// Messages without a header (direct, headerless) carry the msn's low 24 bits in their
// immediate data: anything within the reorder window of the next expected msn names exactly one.
// Returns how far ahead it is, or fails the peer (*ahead = kReorderWindow) naming `what`.
int msn_ahead(Context *ctx, Conn &conn, uint32_t imm, const char *what, uint32_t *ahead) {
  const PeerState &ps = ctx->peers[static_cast<size_t>(conn.peer)];
  *ahead = ((imm >> 8) - ps.next_recv_msn) & 0xffffffu;
  if (*ahead < kReorderWindow) return BRAID_SUCCESS;
  return protocol_error(ctx, conn,
                        std::string(what) + " message with sequence number bits " +
                            std::to_string(imm >> 8) + " while expecting " +
                            std::to_string(ps.next_recv_msn));
}

// Keeps a message that arrived `ahead` of its turn until the ones before it are delivered.
int park(Context *ctx, Conn &conn, uint32_t ahead, Stashed s, const char *what) {
  PeerState &ps = ctx->peers[static_cast<size_t>(conn.peer)];
  if (!ps.reorder.emplace(ps.next_recv_msn + ahead, std::move(s)).second)
    return protocol_error(ctx, conn, std::string("a ") + what + " message's sequence number twice");
  ++ctx->counters.reordered_msgs;
  return BRAID_SUCCESS;
}

constexpr const char *kHeaderlessFirst =
    "a headerless message before any message with a tag (its tag is a delta from that one's)";

// Delivers what waited in the reorder buffer for the messages before it.
int drain_reorder_now(Context *ctx, Conn &conn) {
  PeerState &ps = ctx->peers[static_cast<size_t>(conn.peer)];
  int rc = BRAID_SUCCESS;
  while (rc == BRAID_SUCCESS && ps.failed == 0 && !ps.reorder.empty() &&
         ps.reorder.begin()->first == ps.next_recv_msn) {
    Stashed s = std::move(ps.reorder.begin()->second);
    ps.reorder.erase(ps.reorder.begin());
    if (s.type == MsgType::Direct) {
      std::string why;
      if (!deliver_direct(ctx, conn.peer, s.serial, s.direct_len, &why))
        return protocol_error(ctx, conn, why);
    } else {
      if (s.headerless) {
        if (!ps.recv_tag) return protocol_error(ctx, conn, kHeaderlessFirst);
        s.tag = ps.last_recv_tag + static_cast<uint64_t>(static_cast<int64_t>(s.delta));
      }
      saw_tag(ps, s.tag);
      rc = deliver(ctx, conn.peer, s.type, s.tag, s.payload.data(), s.payload.size(), s.rts);
    }
    ++ps.next_recv_msn;
  }
  return rc;
}

// Every in-order message asks, and the list is nearly always empty: the check stays inline.
int drain_reorder(Context *ctx, Conn &conn) {
  return ctx->peers[static_cast<size_t>(conn.peer)].reorder.empty() ? BRAID_SUCCESS
                                                                    : drain_reorder_now(ctx, conn);
}

// The receive buffer of `slot` goes back to its queue; its credit is owed to the peer.
void repost_later(Context *ctx, Conn &conn, uint32_t slot, bool credit_msg) {
  ClassState &cls = ctx->classes[conn.klass];
  ++ctx->reposts_queued;
  if (cls.srq != nullptr) {
    cls.srq_repost.push_back(slot);
  } else {
    conn.repost.push_back(slot);
    if (credit_msg)
      ++conn.owed_cm_ack;
    else
      ++conn.owed_return;
  }
}

}  // namespace

int on_receive(Context *ctx, Conn &conn, uint32_t slot, size_t byte_len) {
  ClassState &cls = ctx->classes[conn.klass];
  PeerState &ps = ctx->peers[static_cast<size_t>(conn.peer)];
  const uint8_t *data = cls.recv_slot(slot);
  Message msg;
  std::string why;
  WireLimits limits{conn.klass, static_cast<uint8_t>(ctx->classes.size()), cls.spec.count};
  bool ok = parse_message(data, byte_len, limits, &msg, &why);
  // The buffer goes back whatever it held: its contents are copied or matched below.
  repost_later(ctx, conn, slot, ok && msg.header.type == static_cast<uint8_t>(MsgType::Credit));
  if (!ok) return protocol_error(ctx, conn, why);
  if (ps.failed != 0) return BRAID_SUCCESS;
  const Header &h = msg.header;
  if (conn.per_peer) {
    conn.send_credits += h.credits;
    conn.cm_budget += h.cm_ack;
    // A message waiting for credits, or a credit message for budget, may go now.
    if (h.credits != 0 || h.cm_ack != 0) ctx->sends_to_flush = true;
    if (conn.send_credits > initial_credits(cls.spec) || conn.cm_budget > kReservedCreditBuffers)
      return protocol_error(ctx, conn,
                            "returns more credits than were lent (" +
                                std::to_string(conn.send_credits) + " send credits, " +
                                std::to_string(conn.cm_budget) + " credit-message credits)");
  } else if (h.credits != 0 || h.cm_ack != 0) {
    return protocol_error(ctx, conn, "credits on a shared-receive-queue class");
  }
  auto type = static_cast<MsgType>(h.type);
  if (type == MsgType::Credit) return BRAID_SUCCESS;
  if (type == MsgType::Fin) return on_fin(ctx, conn.peer, msg.fin);
  if (type == MsgType::Advert || type == MsgType::Retract || type == MsgType::RetractAck) {
    bool handled = type == MsgType::Advert    ? on_advert(ctx, conn.peer, msg, &why)
                   : type == MsgType::Retract ? on_retract(ctx, conn.peer, msg.retract, &why)
                                              : on_retract_ack(ctx, conn.peer, msg.retract, &why);
    return handled ? BRAID_SUCCESS : protocol_error(ctx, conn, why);
  }
  // Eager or RTS: in msn order.
  uint32_t ahead = h.msn - ps.next_recv_msn;
  if (ahead >= kReorderWindow)
    return protocol_error(ctx, conn,
                          "sequence number " + std::to_string(h.msn) + " while expecting " +
                              std::to_string(ps.next_recv_msn));
  if (ahead > 0) {
    Stashed s;
    s.type = type;
    s.tag = h.tag;
    s.rts = msg.rts;
    if (msg.payload_len > 0) s.payload.assign(msg.payload, msg.payload + msg.payload_len);
    if (!ps.reorder.emplace(h.msn, std::move(s)).second)
      return protocol_error(ctx, conn, "sequence number " + std::to_string(h.msn) + " twice");
    ++ctx->counters.reordered_msgs;
    return BRAID_SUCCESS;
  }
  saw_tag(ps, h.tag);
  int rc = deliver(ctx, conn.peer, type, h.tag, msg.payload, msg.payload_len, msg.rts);
  ++ps.next_recv_msn;
  return rc == BRAID_SUCCESS ? drain_reorder(ctx, conn) : rc;
}

int on_headerless_receive(Context *ctx, Conn &conn, uint32_t slot, size_t byte_len, uint32_t imm) {
  PeerState &ps = ctx->peers[static_cast<size_t>(conn.peer)];
  const uint8_t *data = ctx->classes[conn.klass].recv_slot(slot);
  // Reposted after this call: the payload is copied or matched below.
  repost_later(ctx, conn, slot, false);
  if (ps.failed != 0) return BRAID_SUCCESS;
  // The device refuses a message longer than the receive buffer; checked anyway, against the
  // class's buffers less the header the sender counted when it chose the class (the ranks'
  // eager limits are their own, not exchanged).
  if (byte_len + sizeof(Header) > ctx->classes[conn.klass].slot_bytes)
    return protocol_error(
        ctx, conn,
        "headerless message of " + std::to_string(byte_len) + " bytes, too long for the class's " +
            std::to_string(ctx->classes[conn.klass].slot_bytes) + "-byte buffers with a header");
  uint32_t ahead = 0;
  int rc = msn_ahead(ctx, conn, imm, "headerless", &ahead);
  if (rc != BRAID_SUCCESS || ahead >= kReorderWindow) return rc;
  const int delta = headerless_delta(imm);
  if (ahead > 0) {
    Stashed s;
    s.type = MsgType::Eager;
    s.headerless = true;
    s.delta = delta;
    if (byte_len > 0) s.payload.assign(data, data + byte_len);
    return park(ctx, conn, ahead, std::move(s), "headerless");
  }
  if (!ps.recv_tag) return protocol_error(ctx, conn, kHeaderlessFirst);
  const uint64_t tag = ps.last_recv_tag + static_cast<uint64_t>(static_cast<int64_t>(delta));
  saw_tag(ps, tag);
  rc = deliver(ctx, conn.peer, MsgType::Eager, tag, data, byte_len, RtsBody{});
  ++ps.next_recv_msn;
  return rc == BRAID_SUCCESS ? drain_reorder(ctx, conn) : rc;
}

int on_direct_receive(Context *ctx, Conn &conn, uint32_t slot, size_t byte_len, uint32_t imm) {
  PeerState &ps = ctx->peers[static_cast<size_t>(conn.peer)];
  repost_later(ctx, conn, slot, false);  // it consumed a receive WR, not its buffer
  if (ps.failed != 0) return BRAID_SUCCESS;
  uint32_t ahead = 0;
  const int rc = msn_ahead(ctx, conn, imm, "direct", &ahead);
  if (rc != BRAID_SUCCESS || ahead >= kReorderWindow) return rc;
  const auto serial = static_cast<uint8_t>(imm & 0xffu);
  if (ahead > 0) {
    Stashed s;
    s.type = MsgType::Direct;
    s.direct_len = byte_len;
    s.serial = serial;
    return park(ctx, conn, ahead, std::move(s), "direct");
  }
  std::string why;
  if (!deliver_direct(ctx, conn.peer, serial, byte_len, &why))
    return protocol_error(ctx, conn, why);
  ++ps.next_recv_msn;
  return drain_reorder(ctx, conn);
}

int post_receive(Context *ctx, Request *req) {
  PeerState &ps = ctx->peers[static_cast<size_t>(req->peer)];
  for (auto it = ps.unexpected.begin(); it != ps.unexpected.end(); ++it) {
    if (it->tag != req->tag) continue;
    Stashed s = std::move(*it);
    ps.unexpected.erase(it);
    return complete_match(ctx, req, s.type, s.payload.data(), s.payload.size(), s.rts);
  }
  req->state = ReqState::Posted;
  ps.posted.push_back(req);
  return maybe_advertise(ctx, req);
}

int deliver_local(Context *ctx, Request *send) {
  RtsBody none{};
  int rc = deliver(ctx, ctx->rank, MsgType::Eager, send->tag, send->buf, send->bytes, none);
  send->state = ReqState::Done;
  return rc;
}

}  // namespace braid::verbs
