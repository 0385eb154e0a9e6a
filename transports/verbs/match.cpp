#include "match.hpp"

#include <cstring>

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
    ps.posted.erase(it);
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

int protocol_error(Context *ctx, Conn &conn, const std::string &why) {
  fail_peer(ctx, conn.peer, BRAID_ERR_TRANSPORT,
            "verbs: rank " + std::to_string(ctx->rank) + ": malformed message from rank " +
                std::to_string(conn.peer) + " (class " + std::to_string(conn.klass) + "): " + why);
  ctx->logf(0, "%s", ctx->peers[static_cast<size_t>(conn.peer)].failure.c_str());
  return BRAID_SUCCESS;
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
  if (cls.srq != nullptr) {
    cls.srq_repost.push_back(slot);
  } else {
    conn.repost.push_back(slot);
    if (ok && msg.header.type == static_cast<uint8_t>(MsgType::Credit))
      ++conn.owed_cm_ack;
    else
      ++conn.owed_return;
  }
  if (!ok) return protocol_error(ctx, conn, why);
  if (ps.failed != 0) return BRAID_SUCCESS;
  const Header &h = msg.header;
  if (conn.per_peer) {
    conn.send_credits += h.credits;
    conn.cm_budget += h.cm_ack;
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
  int rc = deliver(ctx, conn.peer, type, h.tag, msg.payload, msg.payload_len, msg.rts);
  ++ps.next_recv_msn;
  while (rc == BRAID_SUCCESS && !ps.reorder.empty() &&
         ps.reorder.begin()->first == ps.next_recv_msn) {
    Stashed s = std::move(ps.reorder.begin()->second);
    ps.reorder.erase(ps.reorder.begin());
    rc = deliver(ctx, conn.peer, s.type, s.tag, s.payload.data(), s.payload.size(), s.rts);
    ++ps.next_recv_msn;
  }
  return rc;
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
  return BRAID_SUCCESS;
}

int deliver_local(Context *ctx, Request *send) {
  RtsBody none{};
  int rc = deliver(ctx, ctx->rank, MsgType::Eager, send->tag, send->buf, send->bytes, none);
  send->state = ReqState::Done;
  return rc;
}

}  // namespace braid::verbs
