#include "inline_send.hpp"

#include <endian.h>

#include <algorithm>
#include <cstring>

#include "send.hpp"
#include "wr_id.hpp"

namespace braid::verbs {
namespace {

// Selective signalling: an inline send (its payload is in the WQE, its request done at posting)
// asks for a completion only every kSignalEvery-th time. A QP's send queue completes in order,
// so that completion frees the send-queue slots of the unsignaled ones before it too (its wr_id
// carries the count). Fewer completions for the device to write and for progress to poll: in the
// guest a CQE is a share of a small message's latency. Bounce sends and READs stay signaled
// (their completion frees a buffer or finishes a request); unsignaled inline sends before one of
// them are freed by the next signaled inline send, a few slots held a little longer.
constexpr int kSignalEvery = 16;

}  // namespace

Header header_for(const Conn &conn, MsgType type, uint32_t msn, uint64_t tag, uint32_t length) {
  Header h{};
  h.type = static_cast<uint8_t>(type);
  h.klass = conn.klass;
  if (conn.per_peer) {
    h.credits = static_cast<uint16_t>(conn.pending_return);
    h.cm_ack = static_cast<uint16_t>(conn.pending_cm_ack);
  }
  h.msn = msn;
  h.tag = tag;
  h.length = length;
  return h;
}

void spend_credit(Conn &conn, bool credit_msg, bool headerless) {
  if (!conn.per_peer) return;
  if (credit_msg)
    --conn.cm_budget;
  else
    --conn.send_credits;
  if (!headerless) {
    conn.pending_return = 0;
    conn.pending_cm_ack = 0;
  }
}

int post_failed(Context *ctx, const Conn &conn, size_t wire, int rc) {
  return ctx->error(BRAID_ERR_TRANSPORT,
                    "verbs: rank %d: ibv_post_send of a %zu-byte message to rank %d (class %u): %s",
                    ctx->rank, wire, conn.peer, conn.klass, std::strerror(rc));
}

int post_inline(Context *ctx, Conn &conn, const Header *h, const void *data, size_t body,
                bool with_imm, uint32_t imm) {
  ibv_sge sge[2];
  int n = 0;
  if (h != nullptr) sge[n++] = ibv_sge{reinterpret_cast<uint64_t>(h), sizeof *h, 0};
  if (body > 0)
    sge[n++] = ibv_sge{reinterpret_cast<uint64_t>(data), static_cast<uint32_t>(body), 0};
  ibv_send_wr wr{};
  wr.sg_list = sge;
  wr.num_sge = n;
  wr.opcode = with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
  wr.send_flags = IBV_SEND_INLINE;
  wr.imm_data = htobe32(imm);
  // Signaled also when the queue runs low, so a completion always comes to free the slots.
  uint32_t signaled = 0;
  if (conn.unsignaled + 1 >= kSignalEvery || conn.sq_free <= kSignalEvery) {
    wr.send_flags |= IBV_SEND_SIGNALED;
    signaled = static_cast<uint32_t>(conn.unsignaled + 1);
  }
  wr.wr_id = encode_wr_id(WrKind::SendInline, conn.klass, conn.index, signaled);
  ibv_send_wr *bad = nullptr;
  int rc = ibv_post_send(conn.qp, &wr, &bad);
  if (rc != 0) return post_failed(ctx, conn, (h != nullptr ? sizeof *h : 0) + body, rc);
  --conn.sq_free;
  conn.unsignaled = signaled == 0 ? conn.unsignaled + 1 : 0;
  return BRAID_SUCCESS;
}

bool try_send_inline(Context *ctx, int peer, Request *req, int *rc) {
  PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  Conn &conn = ctx->conn(peer, ctx->fast_inline_class);
  // Anything else takes the general path: an advert it might consume, messages queued ahead,
  // a full send queue or no credit.
  if (!ps.adverts_in.empty() || !conn.backlog.empty() || conn.sq_free == 0 ||
      (conn.per_peer && conn.send_credits == 0))
    return false;
  const uint32_t msn = ps.next_send_msn;
  const Header h =
      header_for(conn, MsgType::Eager, msn, req->tag, static_cast<uint32_t>(req->bytes));
  *rc = post_inline(ctx, conn, &h, req->buf, req->bytes, false, 0);
  // The number is taken even when the post failed (isend fails the peer then).
  ps.sent_tags[msn % kSentTags] = req->tag;  // as take_advert records it
  ps.last_sent_tag = req->tag;
  ps.sent_tag = true;
  ++ps.next_send_msn;
  if (*rc != BRAID_SUCCESS) return true;
  spend_credit(conn, false, false);
  ++ctx->counters.inline_msgs;
  ++ctx->counters.fast_inline_msgs;
  ctx->counters.inline_bytes += req->bytes;
  req->state = ReqState::Done;  // the payload is in the WQE
  return true;
}

void plan_fast_inline(Context *ctx) {
  ctx->fast_inline = false;
  const int klass = class_for(ctx, sizeof(Header));
  if (klass < 0 || ctx->max_inline < sizeof(Header)) return;
  // Every size up to the limit must be one the general path sends inline with a header on this
  // class: eager, within the class's buffers and the inline limit, and never headerless.
  size_t max =
      std::min<size_t>(ctx->max_inline, ctx->classes[static_cast<size_t>(klass)].slot_bytes) -
      sizeof(Header);
  max = std::min(max, ctx->eager_limit);
  const int mtu_code = static_cast<int>(ctx->port_attr.active_mtu);
  if (ctx->opt.headerless && mtu_code >= IBV_MTU_256 && mtu_code <= IBV_MTU_4096) {
    const size_t mtu = size_t{128} << mtu_code;
    for (size_t b = 1; b <= max; ++b)
      if (header_costs_a_packet(b, mtu)) {
        max = b - 1;
        break;
      }
  }
  ctx->fast_inline = true;
  ctx->fast_inline_class = static_cast<uint8_t>(klass);
  ctx->fast_inline_max = max;
}

}  // namespace braid::verbs
