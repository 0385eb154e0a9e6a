#include "cancel.hpp"

#include <algorithm>
#include <chrono>

#include "completion.hpp"
#include "direct.hpp"
#include "rendezvous.hpp"
#include "send.hpp"

namespace braid::verbs {
namespace {

// A message not posted yet keeps its place in the peer's message order (the peer matches by
// sequence number and would wait for a gap forever), so it is detached from the request instead
// of dropped: an eager payload is copied; an RTS goes out but its registration is gone, so the
// peer's READ fails and names us.
bool detach_queued(Context *ctx, Request *req) {
  for (Conn &conn : ctx->conns) {
    for (Outgoing &o : conn.backlog) {
      if (o.req != req) continue;
      if (o.type == MsgType::Eager || o.type == MsgType::Direct || o.type == MsgType::Headerless) {
        o.detached.assign(req->buf, req->buf + req->bytes);
        o.detached_payload = true;
      }
      o.req = nullptr;
      return true;
    }
  }
  return false;
}

// READs already posted write into the receive buffer until they complete: wait for them
// (bounded by the timeout), then tell the sender it may let go.
int drain_reads(Context *ctx, Request *req) {
  if (req->read_status == 0) {
    req->read_status = BRAID_ERR_TRANSPORT;
    req->error = "cancelled";
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(ctx->timeout_s);
  while (req->reads_done < req->reads_posted) {
    int rc = progress_all(ctx);
    if (rc != BRAID_SUCCESS) return rc;
    if (std::chrono::steady_clock::now() > deadline)
      return ctx->error(BRAID_ERR_TIMEOUT,
                        "verbs: rank %d: cancelling a receive from rank %d: %u RDMA READs still "
                        "outstanding after %.1f s",
                        ctx->rank, req->peer, req->reads_posted - req->reads_done, ctx->timeout_s);
    if (req->reads_done < req->reads_posted) wait_for_events(ctx, 1);
  }
  return BRAID_SUCCESS;
}

}  // namespace

int cancel_request(Context *ctx, Request *req) {
  int rc = BRAID_SUCCESS;
  switch (req->state) {
    case ReqState::Posted: {
      PeerState &ps = ctx->peers[static_cast<size_t>(req->peer)];
      // Adverts count the receives posted before them: if one counts this receive (or is its
      // own), the sender's numbering must be taken back first. Until then the receive stays
      // posted as a placeholder, so that messages the sender numbered before it saw the
      // retract match the receives it counted; one that matches the placeholder is dropped,
      // as a message that races a cancel is.
      if (advert_counts(ps, req)) {
        req->cancelling = true;
        rc = retract_adverts(ctx, req->peer);
      }
      ps.posted.erase(std::remove(ps.posted.begin(), ps.posted.end(), req), ps.posted.end());
      req->advertised = false;
      break;
    }
    case ReqState::Queued:
      detach_queued(ctx, req);
      break;
    case ReqState::Reading:
      // Every READ done and the FIN queued: it still goes out, without the request.
      if (detach_queued(ctx, req)) break;
      rc = drain_reads(ctx, req);
      if (req->reads_done < req->reads_posted) {
        // The READs did not drain (timeout, or the device failed): the peer's queue pairs go to
        // the error state, which flushes them, and the request stays allocated with its
        // registration until the last one is polled (on_read_complete releases it). Released
        // now, its buffer could still be written, and its slot, named by the READs' wr_id,
        // would be handed to the next receive.
        fail_peer(ctx, req->peer, rc, ctx->err != nullptr ? ctx->err : "cancel did not drain");
        req->free_when_done = true;
        return rc;
      }
      if (ctx->peers[static_cast<size_t>(req->peer)].failed == 0) {
        Outgoing fin;
        fin.type = MsgType::Fin;
        fin.fin.send_id = req->rts.send_id;
        fin.fin.status = BRAID_ERR_TRANSPORT;
        enqueue(ctx, req->peer, class_for(ctx, sizeof(Header) + sizeof(FinBody)), std::move(fin));
      }
      break;
    case ReqState::WaitFin:
    case ReqState::Done:
    case ReqState::Failed:
      break;
  }
  release_transient(req, true);
  ctx->requests.release(req);
  return rc;
}

}  // namespace braid::verbs
