#include "direct.hpp"

#include <algorithm>
#include <chrono>

#include "completion.hpp"
#include "memory.hpp"
#include "rendezvous.hpp"
#include "send.hpp"

namespace braid::verbs {
namespace {

// Adverts one receiver has outstanding to one sender: enough for a collective's steps or a
// window of streamed receives, few enough that the serial's low 8 bits name one.
constexpr size_t kMaxAdverts = 16;
// A receiver whose adverts all go unused pauses them, and then tries one every this many
// receives to see whether its sender has started to post its messages later.
constexpr uint32_t kProbeEvery = 8;
constexpr int kScoreMax = 8;

bool serial_in_use(const PeerState &ps, uint32_t serial) {
  return std::any_of(ps.adverts_out.begin(), ps.adverts_out.end(),
                     [&](const AdvertOut &a) { return ((a.serial ^ serial) & 0xffu) == 0; });
}

// The key the advert hands out: the caller's registration when it covers the buffer (it has
// remote write, reg_mr), else the registration cache's entry, held until the advert ends. No
// registration of its own: one ibv_reg_mr costs more than the copy it would save.
bool advert_key(Context *ctx, Request *req, uint32_t *rkey) {
  if (covers(req->user_mr, req->buf, req->bytes)) {
    *rkey = req->user_mr->rkey;
    return true;
  }
  if (ctx->rcache == nullptr) return false;
  req->cached = ctx->rcache->acquire(req->buf, req->bytes);
  if (req->cached == nullptr) return false;
  *rkey = req->cached->mr->rkey;
  return true;
}

int small_class(const Context *ctx, size_t body) {
  return class_for(ctx, sizeof(Header) + body);
}

std::string rank_text(const Context *ctx, int peer) {
  return "rank " + std::to_string(ctx->rank) + " (from rank " + std::to_string(peer) + ")";
}

}  // namespace

int maybe_advertise(Context *ctx, Request *req) {
  if (!ctx->opt.direct || req->bytes < kDirectMinBytes || req->peer == ctx->rank || ctx->finalizing)
    return BRAID_SUCCESS;
  PeerState &ps = ctx->peers[static_cast<size_t>(req->peer)];
  if (ps.failed != 0 || ps.retracting || ps.adverts_out.size() >= kMaxAdverts) return BRAID_SUCCESS;
  if (ps.advert_score < 1 && ++ps.advert_probe % kProbeEvery != 0) return BRAID_SUCCESS;
  if (serial_in_use(ps, ps.next_serial)) return BRAID_SUCCESS;
  uint32_t rkey = 0;
  if (!advert_key(ctx, req, &rkey)) return BRAID_SUCCESS;
  uint32_t ahead = 0;
  for (const Request *p : ps.posted)
    if (p != req && p->tag == req->tag) ++ahead;
  Outgoing o;
  o.type = MsgType::Advert;
  o.msn = ps.next_recv_msn;
  o.tag = req->tag;
  o.advert =
      AdvertBody{reinterpret_cast<uint64_t>(req->buf), req->bytes, rkey, ahead, ps.next_serial, 0};
  ps.adverts_out.push_back(AdvertOut{req, ps.next_serial});
  req->advertised = true;
  ++ps.next_serial;
  ++ctx->counters.adverts;
  int rc = send_now(ctx, req->peer, small_class(ctx, sizeof(AdvertBody)), std::move(o));
  if (rc != BRAID_SUCCESS) {
    // Not sent: the receive stays posted and is matched as usual (a broken queue pair fails
    // the peer through its completions).
    ps.adverts_out.pop_back();
    req->advertised = false;
    release_transient(req);
    ctx->logf(1, "verbs: rank %d: an advert to rank %d was not sent", ctx->rank, req->peer);
  }
  return BRAID_SUCCESS;
}

void end_advert(Context *ctx, Request *req, bool used) {
  PeerState &ps = ctx->peers[static_cast<size_t>(req->peer)];
  auto it = std::find_if(ps.adverts_out.begin(), ps.adverts_out.end(),
                         [&](const AdvertOut &a) { return a.req == req; });
  if (it != ps.adverts_out.end()) ps.adverts_out.erase(it);
  req->advertised = false;
  release_transient(req);  // the registration stays cached
  if (used) {
    ps.advert_score = std::min(ps.advert_score + 1, kScoreMax);
  } else {
    ++ctx->counters.adverts_unused;
    ps.advert_score = std::max(ps.advert_score - 1, 0);
  }
}

bool take_advert(Context *ctx, int peer, uint32_t msn, uint64_t tag, size_t bytes,
                 DirectTarget *out) {
  PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  ps.sent_tags[msn % kSentTags] = tag;
  bool direct = false;
  for (auto it = ps.adverts_in.begin(); it != ps.adverts_in.end();) {
    if (it->tag != tag) {
      ++it;
      continue;
    }
    if (it->skip > 0) {  // a receive posted before that one takes this message
      --it->skip;
      ++it;
      continue;
    }
    // This message matches the advertised receive: written into it when it fits the eager
    // path, else sent as usual (a larger one as a rendezvous, one too long for the buffer
    // to be refused there by the receiver's usual check).
    if (bytes >= kDirectMinBytes && bytes <= ctx->eager_limit && bytes <= it->capacity) {
      *out = it->target;
      direct = true;
    }
    it = ps.adverts_in.erase(it);
  }
  return direct;
}

bool on_advert(Context *ctx, int peer, const Message &msg, std::string *why) {
  PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  const AdvertBody &ad = msg.advert;
  if (ps.adverts_in.size() >= kMaxAdverts) {
    *why = "more than " + std::to_string(kMaxAdverts) + " adverts outstanding";
    return false;
  }
  const uint32_t since = ps.next_send_msn - msg.header.msn;
  if (since > (1u << 31)) {
    *why = "an advert says sequence number " + std::to_string(msg.header.msn) +
           " was reached, but only " + std::to_string(ps.next_send_msn) + " were sent";
    return false;
  }
  // Too old to tell which of our messages it meant: void, the receive is matched as usual.
  if (since > kSentTags) return true;
  uint32_t sent = 0;  // messages with its tag sent since the receiver posted it
  for (uint32_t k = 0; k < since; ++k)
    if (ps.sent_tags[(msg.header.msn + k) % kSentTags] == msg.header.tag) ++sent;
  if (sent > ad.ahead) return true;  // its message already left as usual: void
  AdvertIn in;
  in.tag = msg.header.tag;
  in.capacity = ad.capacity;
  in.target = DirectTarget{ad.addr, ad.rkey, ad.serial};
  in.skip = ad.ahead - sent;
  ps.adverts_in.push_back(in);
  return true;
}

bool on_retract(Context *ctx, int peer, const RetractBody &body, std::string *) {
  PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  // The receiver sends no advert while it retracts, and its adverts travel on the same queue
  // pair as the retract: every one it sent is here already.
  ps.adverts_in.clear();
  Outgoing ack;
  ack.type = MsgType::RetractAck;
  ack.retract = RetractBody{body.serial, ps.next_send_msn};
  enqueue(ctx, peer, small_class(ctx, sizeof(RetractBody)), std::move(ack));
  return true;
}

bool on_retract_ack(Context *ctx, int peer, const RetractBody &body, std::string *why) {
  PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  if (!ps.retracting || ps.retract_acked) {
    *why = "an acknowledgement of a retract that was not asked for";
    return false;
  }
  if (ps.next_serial - 1 != body.serial) {
    *why = "a retract acknowledgement for advert " + std::to_string(body.serial) + ", expected " +
           std::to_string(ps.next_serial - 1);
    return false;
  }
  ps.retract_acked = true;
  ps.retract_watermark = body.watermark;
  return true;
}

bool deliver_direct(Context *ctx, int peer, uint8_t serial, size_t len, std::string *why) {
  PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  auto it = std::find_if(ps.adverts_out.begin(), ps.adverts_out.end(),
                         [&](const AdvertOut &a) { return (a.serial & 0xffu) == serial; });
  if (it == ps.adverts_out.end()) {
    *why = "a direct message for advert " + std::to_string(serial) + ", which is not outstanding";
    return false;
  }
  Request *req = it->req;
  if (len > req->bytes) {
    *why = "a direct message of " + std::to_string(len) + " bytes into a receive of " +
           std::to_string(req->bytes);
    return false;
  }
  auto first = std::find_if(ps.posted.begin(), ps.posted.end(),
                            [&](const Request *p) { return p->tag == req->tag; });
  if (first == ps.posted.end() || *first != req) {
    *why = "a direct message into a receive that is not the next one for its tag";
    return false;
  }
  ps.posted.erase(first);
  if (req->cancelling) {  // a cancel's placeholder: the bytes went to a buffer nobody reads
    end_advert(ctx, req, true);
    return true;
  }
  req->received = len;
  req->state = ReqState::Done;
  end_advert(ctx, req, true);
  return true;
}

bool advert_counts(const PeerState &ps, const Request *req) {
  return std::any_of(ps.adverts_out.begin(), ps.adverts_out.end(),
                     [&](const AdvertOut &a) { return a.req == req || a.req->tag == req->tag; });
}

void drop_for_cancel(Context *ctx, Request *req, MsgType type, const RtsBody &rts) {
  if (type != MsgType::Rts) return;
  Outgoing fin;
  fin.type = MsgType::Fin;
  fin.fin.send_id = rts.send_id;
  fin.fin.status = BRAID_ERR_TRANSPORT;
  enqueue(ctx, req->peer, small_class(ctx, sizeof(FinBody)), std::move(fin));
}

int retract_adverts(Context *ctx, int peer) {
  PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  if (ps.adverts_out.empty()) return BRAID_SUCCESS;
  int rc = BRAID_SUCCESS;
  if (ps.failed == 0 && !ctx->finalizing) {
    ps.retracting = true;
    ps.retract_acked = false;
    ++ctx->counters.retracts;
    Outgoing r;
    r.type = MsgType::Retract;
    r.retract = RetractBody{ps.next_serial - 1, 0};
    rc = send_now(ctx, peer, small_class(ctx, sizeof(RetractBody)), std::move(r));
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(ctx->timeout_s);
    // Done when the sender dropped our adverts and every direct message it had decided on
    // (msn below the watermark) has been delivered.
    auto settled = [&] {
      return ps.retract_acked && static_cast<int32_t>(ps.next_recv_msn - ps.retract_watermark) >= 0;
    };
    while (rc == BRAID_SUCCESS && ps.failed == 0 && !settled()) {
      rc = progress_all(ctx);
      if (rc != BRAID_SUCCESS || settled()) break;
      if (std::chrono::steady_clock::now() > deadline) {
        rc = ctx->error(BRAID_ERR_TIMEOUT,
                        "verbs: %s: cancelling a receive: no answer to taking back %zu "
                        "adverts after %.1f s",
                        rank_text(ctx, peer).c_str(), ps.adverts_out.size(), ctx->timeout_s);
        break;
      }
      wait_for_events(ctx, 1);
    }
    if (rc != BRAID_SUCCESS && ps.failed == 0) {
      const std::string text =
          ctx->err != nullptr && ctx->err[0] != '\0'
              ? std::string(ctx->err)
              : "verbs: " + rank_text(ctx, peer) + ": taking adverts back failed";
      fail_peer(ctx, peer, rc, text);
    }
  }
  // What is left was never used: the sender dropped it, or cannot write any more. The receive
  // being cancelled also drops its cached registration (its key writes into a buffer that is
  // the application's again); the others are still posted and may use theirs.
  for (AdvertOut &a : ps.adverts_out) {
    a.req->advertised = false;
    release_transient(a.req, a.req->cancelling);
  }
  ps.adverts_out.clear();
  ps.retracting = false;
  return rc;
}

void forget_adverts(Context *ctx, int peer) {
  PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
  for (AdvertOut &a : ps.adverts_out) a.req->advertised = false;
  ps.adverts_out.clear();
  ps.adverts_in.clear();
  ps.retracting = false;
}

}  // namespace braid::verbs
