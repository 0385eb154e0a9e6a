#include "completion.hpp"

#include <endian.h>
#include <poll.h>

#include <cerrno>
#include <cstring>

#include "match.hpp"
#include "queues.hpp"
#include "rendezvous.hpp"
#include "send.hpp"
#include "wr_id.hpp"

namespace braid::verbs {
namespace {

const char *opcode_text(WrKind kind) {
  return wr_kind_name(kind);
}

// A failed completion: which peer, what operation, and the device's reason.
int on_wc_error(Context *ctx, const ibv_wc &wc, const WrId &id) {
  int peer = -1;
  uint8_t klass = id.klass;
  if (id.kind == WrKind::Recv && ctx->classes[klass].srq != nullptr) {
    auto it = ctx->qpn_to_conn.find(wc.qp_num);
    if (it != ctx->qpn_to_conn.end()) peer = ctx->conns[it->second].peer;
  } else if (id.conn < ctx->conns.size()) {
    Conn &conn = ctx->conns[id.conn];
    peer = conn.peer;
    if (id.kind == WrKind::SendBounce) ctx->classes[klass].send_free.push_back(id.slot);
    if (id.kind == WrKind::SendInline)
      conn.sq_free += static_cast<int>(id.slot);  // 0 for a flushed unsignaled one
    else if (id.kind != WrKind::Recv)
      ++conn.sq_free;
  }
  if (id.kind == WrKind::Recv && ctx->classes[klass].srq != nullptr) {
    ClassState &cls = ctx->classes[klass];
    --cls.srq_posted;
    // The buffer is free once its completion is polled, failed or not; the SRQ serves every
    // other peer, so it goes back rather than shrinking the queue for good.
    if (!ctx->finalizing) {
      cls.srq_repost.push_back(id.slot);
      ++ctx->reposts_queued;
    }
  }
  if (ctx->finalizing) return BRAID_SUCCESS;
  int code = BRAID_ERR_TRANSPORT;
  const char *meaning = "";
  switch (wc.status) {
    case IBV_WC_RETRY_EXC_ERR:
      code = BRAID_ERR_PEER_FAILED;
      meaning = " (the peer stopped answering: its process died or the link is down)";
      break;
    case IBV_WC_REM_ABORT_ERR:
    case IBV_WC_WR_FLUSH_ERR:
      code = BRAID_ERR_PEER_FAILED;
      meaning = " (the connection to the peer was already broken)";
      break;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      meaning = " (the peer had no receive posted: its receive queue ran dry)";
      break;
    default:
      break;
  }
  std::string text = "verbs: rank " + std::to_string(ctx->rank) + ": " + opcode_text(id.kind) +
                     (peer >= 0 ? " with rank " + std::to_string(peer) : std::string()) +
                     " (class " + std::to_string(klass) +
                     ") failed: " + ibv_wc_status_str(wc.status) + meaning + ", vendor error 0x" +
                     [&] {
                       char b[16];
                       std::snprintf(b, sizeof b, "%x", wc.vendor_err);
                       return std::string(b);
                     }();
  if (id.kind == WrKind::Read) {
    Request *req = ctx->requests.at(id.slot);
    if (req != nullptr && req->state == ReqState::Reading)
      on_read_complete(ctx, req, false, code, text);
  }
  if (peer >= 0) {
    PeerState &ps = ctx->peers[static_cast<size_t>(peer)];
    // Flushes after the first failure repeat it; keep the first reason.
    if (ps.failed == 0) {
      ctx->logf(0, "%s", text.c_str());
      fail_peer(ctx, peer, code, text);
    }
  }
  return BRAID_SUCCESS;
}

int on_completion(Context *ctx, const ibv_wc &wc) {
  WrId id = decode_wr_id(wc.wr_id);
  if (id.klass >= ctx->classes.size()) return BRAID_SUCCESS;
  if (wc.status != IBV_WC_SUCCESS) return on_wc_error(ctx, wc, id);
  switch (id.kind) {
    case WrKind::Recv: {
      ++ctx->turn_receives;
      uint32_t conn_index = id.conn;
      ClassState &cls = ctx->classes[id.klass];
      if (cls.srq != nullptr) {
        --cls.srq_posted;
        auto it = ctx->qpn_to_conn.find(wc.qp_num);
        if (it == ctx->qpn_to_conn.end()) {  // cannot happen: every QP is in the map
          cls.srq_repost.push_back(id.slot);
          ++ctx->reposts_queued;
          return BRAID_SUCCESS;
        }
        conn_index = it->second;
      }
      if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM)
        return on_direct_receive(ctx, ctx->conns[conn_index], id.slot, wc.byte_len,
                                 be32toh(wc.imm_data));
      if ((wc.wc_flags & IBV_WC_WITH_IMM) != 0)
        return on_headerless_receive(ctx, ctx->conns[conn_index], id.slot, wc.byte_len,
                                     be32toh(wc.imm_data));
      return on_receive(ctx, ctx->conns[conn_index], id.slot, wc.byte_len);
    }
    case WrKind::SendBounce:
      ctx->classes[id.klass].send_free.push_back(id.slot);
      ++ctx->conns[id.conn].sq_free;
      return BRAID_SUCCESS;
    case WrKind::SendInline:
      ctx->conns[id.conn].sq_free += static_cast<int>(id.slot);
      return BRAID_SUCCESS;
    case WrKind::Read: {
      ++ctx->conns[id.conn].sq_free;
      Request *req = ctx->requests.at(id.slot);
      if (req == nullptr || req->state != ReqState::Reading) return BRAID_SUCCESS;
      return on_read_complete(ctx, req, true, 0, std::string());
    }
  }
  return BRAID_SUCCESS;
}

int poll_cq(Context *ctx, int *seen = nullptr) {
  ibv_wc wcs[32];
  while (true) {
    int n = ibv_poll_cq(ctx->cq, 32, wcs);
    if (n == 0) return BRAID_SUCCESS;  // the spinning turn's case: nothing more to set up
    if (n < 0)
      return ctx->error(BRAID_ERR_TRANSPORT, "verbs: rank %d: ibv_poll_cq failed on %s", ctx->rank,
                        ctx->device_name.c_str());
    if (seen != nullptr) *seen += n;
    // Every completion taken off the CQ is handled even after one fails: each returns a buffer,
    // a send slot or a credit that would otherwise be gone for good.
    // The first failure's text is kept too: a later handler's error would overwrite it.
    int first_error = BRAID_SUCCESS;
    std::string first_text;
    for (int i = 0; i < n; ++i) {
      int rc = on_completion(ctx, wcs[i]);
      if (rc != BRAID_SUCCESS && first_error == BRAID_SUCCESS) {
        first_error = rc;
        first_text = ctx->err != nullptr ? ctx->err : "";
      }
    }
    if (first_error != BRAID_SUCCESS) return ctx->error(first_error, "%s", first_text.c_str());
    if (n < 32) return BRAID_SUCCESS;
  }
}

int conn_of_qp(Context *ctx, ibv_qp *qp) {
  if (qp == nullptr) return -1;
  auto it = ctx->qpn_to_conn.find(qp->qp_num);
  return it == ctx->qpn_to_conn.end() ? -1 : static_cast<int>(it->second);
}

int poll_async_events(Context *ctx) {
  while (true) {
    pollfd pfd{ctx->verbs->async_fd, POLLIN, 0};
    if (poll(&pfd, 1, 0) <= 0) return BRAID_SUCCESS;
    ibv_async_event ev{};
    if (ibv_get_async_event(ctx->verbs, &ev) != 0) return BRAID_SUCCESS;
    int rc = BRAID_SUCCESS;
    switch (ev.event_type) {
      case IBV_EVENT_SRQ_LIMIT_REACHED:
        rc = on_srq_limit(ctx, ev.element.srq);
        break;
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR: {
        int c = conn_of_qp(ctx, ev.element.qp);
        if (c >= 0 && !ctx->finalizing) {
          const Conn &conn = ctx->conns[static_cast<size_t>(c)];
          std::string text = "verbs: rank " + std::to_string(ctx->rank) + ": queue pair to rank " +
                             std::to_string(conn.peer) + " (class " + std::to_string(conn.klass) +
                             ") failed: " + ibv_event_type_str(ev.event_type);
          ctx->logf(0, "%s", text.c_str());
          fail_peer(ctx, conn.peer, BRAID_ERR_TRANSPORT, text);
        }
        break;
      }
      case IBV_EVENT_PORT_ERR:
      case IBV_EVENT_DEVICE_FATAL:
      case IBV_EVENT_CQ_ERR:
      case IBV_EVENT_SRQ_ERR:
        // A CQ or SRQ in error loses completions or leaves shared-class senders retrying for
        // ever: the job would otherwise hang until BRAID_TIMEOUT without a reason.
        if (ev.event_type != IBV_EVENT_PORT_ERR || ev.element.port_num == ctx->port) {
          ctx->fatal = BRAID_ERR_TRANSPORT;
          ctx->fatal_text = "verbs: rank " + std::to_string(ctx->rank) + ": " + ctx->device_name +
                            ":" + std::to_string(ctx->port) + ": " +
                            ibv_event_type_str(ev.event_type);
          ctx->logf(0, "%s", ctx->fatal_text.c_str());
        }
        break;
      default:
        ctx->logf(1, "verbs: rank %d: async event %s", ctx->rank,
                  ibv_event_type_str(ev.event_type));
        break;
    }
    ibv_ack_async_event(&ev);
    if (rc != BRAID_SUCCESS) return rc;
  }
}

int poll_cm_events(Context *ctx) {
  while (true) {
    rdma_cm_event *ev = nullptr;
    if (rdma_get_cm_event(ctx->channel, &ev) != 0) return BRAID_SUCCESS;  // EAGAIN: none
    rdma_cm_event_type type = ev->event;
    auto index = reinterpret_cast<uintptr_t>(ev->id != nullptr ? ev->id->context : nullptr);
    if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
      // Every connection of the job was made during init: this one is a stranger.
      rdma_cm_id *id = ev->id;
      rdma_reject(id, nullptr, 0);
      rdma_ack_cm_event(ev);
      rdma_destroy_id(id);
      ctx->logf(0, "verbs: rank %d: rejected an rdma_cm connection request after init", ctx->rank);
      continue;
    }
    rdma_ack_cm_event(ev);
    if (ctx->finalizing || index == 0 || index > ctx->conns.size()) continue;
    const Conn &conn = ctx->conns[index - 1];
    if (type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_DEVICE_REMOVAL ||
        type == RDMA_CM_EVENT_TIMEWAIT_EXIT) {
      std::string text = "verbs: rank " + std::to_string(ctx->rank) + ": rank " +
                         std::to_string(conn.peer) + " disconnected (rdma_cm " +
                         rdma_event_str(type) + "): its process ended or the link broke";
      if (ctx->peers[static_cast<size_t>(conn.peer)].failed == 0) ctx->logf(0, "%s", text.c_str());
      fail_peer(ctx, conn.peer, BRAID_ERR_PEER_FAILED, text);
    }
  }
}

int poll_events(Context *ctx) {
  int rc = poll_async_events(ctx);
  return rc == BRAID_SUCCESS ? poll_cm_events(ctx) : rc;
}

// The async-event and rdma_cm channels cost a system call each to look at (poll, and a read
// that fails with EAGAIN), while the CQ is polled in user space. A rank spinning on one
// message calls progress back to back, and system calls there are latency the completion
// waits through: at every 16th turn they were still 5% of a ping-pong's samples in the guest
// (with the clock reads they cost under emulation), so look at them on every 256th turn, tens of
// microseconds apart natively. Their events (a QP error, an SRQ limit, a disconnect) are rare
// and not urgent to the microsecond (a dead peer's sends fail on the CQ too), and
// wait_for_events polls their descriptors on every call.
constexpr unsigned kEventPollInterval = 256;

}  // namespace

int progress_all(Context *ctx) {
  if (ctx->fatal != 0) return ctx->error(ctx->fatal, "%s", ctx->fatal_text.c_str());
  ctx->turn_receives = 0;
  int rc = poll_cq(ctx);
  if (rc == BRAID_SUCCESS && ++ctx->progress_calls % kEventPollInterval == 0) rc = poll_events(ctx);
  // A turn that completed a receive returns to its caller before posting the buffers again: the
  // caller's reply to that message is the latency that counts, and the posting follows on its
  // next turn. Never for two turns in a row (a credit message's buffer owes the peer an
  // acknowledgement), nor past a batch.
  if (rc == BRAID_SUCCESS && ctx->reposts_queued > 0) {
    if (ctx->turn_receives > 0 && !ctx->reposts_deferred &&
        ctx->reposts_queued < ctx->repost_batch) {
      ctx->reposts_deferred = true;
    } else {
      ctx->reposts_deferred = false;
      rc = flush_reposts(ctx);
    }
  }
  if (rc == BRAID_SUCCESS && ctx->sends_to_flush) rc = flush_sends(ctx);
  if (rc == BRAID_SUCCESS && ctx->reads_to_post) rc = flush_reads(ctx);
  return rc;
}

int wait_for_events(Context *ctx, int timeout_ms) {
  // Nothing is left for later before sleeping: buffers still to post (credits a peer may wait
  // for) and sends or READs that could go.
  int flushed = flush_reposts(ctx);
  if (flushed == BRAID_SUCCESS && ctx->sends_to_flush) flushed = flush_sends(ctx);
  if (flushed == BRAID_SUCCESS && ctx->reads_to_post) flushed = flush_reads(ctx);
  if (flushed != BRAID_SUCCESS) return flushed;
  if (!ctx->cq_armed) {
    // Unarmed, the channel would never wake us. Not a reason to fail the job (the CQ works;
    // a CQ in error raises its own event): the wait becomes a poll every millisecond, and the
    // log says why once.
    const int notify = ibv_req_notify_cq(ctx->cq, 0);
    if (notify == 0) {
      ctx->cq_armed = true;
    } else if (!ctx->notify_failed) {
      ctx->notify_failed = true;
      ctx->logf(0,
                "verbs: rank %d: ibv_req_notify_cq on %s failed (%s): completions are polled "
                "every millisecond while waiting",
                ctx->rank, ctx->device_name.c_str(), std::strerror(notify));
    }
  }
  // A completion that arrived before arming raises no event: look once more.
  int seen = 0;
  int rc = poll_cq(ctx, &seen);
  if (rc != BRAID_SUCCESS || seen > 0) return rc;
  // poll() skips a negative descriptor: the completion channel only when armed.
  pollfd pfds[3] = {{ctx->cq_armed ? ctx->comp_channel->fd : -1, POLLIN, 0},
                    {ctx->verbs->async_fd, POLLIN, 0},
                    {ctx->channel->fd, POLLIN, 0}};
  const int limit =
      ctx->cq_armed ? timeout_ms : (timeout_ms < 0 || timeout_ms > 1 ? 1 : timeout_ms);
  int n = poll(pfds, 3, limit);
  if (n > 0 && (pfds[0].revents & POLLIN) != 0) {
    ibv_cq *cq = nullptr;
    void *cq_ctx = nullptr;
    if (ibv_get_cq_event(ctx->comp_channel, &cq, &cq_ctx) == 0) {
      ibv_ack_cq_events(cq, 1);
      ctx->cq_armed = false;
    }
  }
  // What woke us on the event channels is handled now, not at progress's next look.
  if (n > 0 && ((pfds[1].revents | pfds[2].revents) & POLLIN) != 0) return poll_events(ctx);
  return BRAID_SUCCESS;
}

}  // namespace braid::verbs
