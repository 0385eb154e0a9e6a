#include "rendezvous.hpp"

#include <algorithm>
#include <cstring>

#include "memory.hpp"
#include "rcache.hpp"
#include "send.hpp"
#include "wr_id.hpp"

namespace braid::verbs {
namespace {

// One READ carries at most 1 GiB even where the port allows more, like every other message.
constexpr uint64_t kMaxReadChunk = uint64_t{1} << 30;

ibv_mr *rendezvous_mr(const Request *req) {
  if (req->transient_mr != nullptr) return req->transient_mr;
  return req->cached != nullptr ? req->cached->mr : req->user_mr;
}

// Registers `bytes` of the request's buffer for this rendezvous: from the registration cache
// where there is one and it takes this memory, else for this rendezvous only with `access`.
int register_for_rendezvous(Context *ctx, Request *req, size_t bytes, int access,
                            const char *what) {
  if (ctx->rcache != nullptr) {
    req->cached = ctx->rcache->acquire(req->buf, bytes);
    if (req->cached != nullptr) return BRAID_SUCCESS;
  }
  return register_transient(ctx, req->buf, bytes, access, req->peer, what, &req->transient_mr);
}

uint64_t read_chunk(const Context *ctx) {
  return std::min<uint64_t>(ctx->max_msg_sz > 0 ? ctx->max_msg_sz : kMaxReadChunk, kMaxReadChunk);
}

// `done` (the receive whose READs finished) completes when its FIN is posted, not before: a
// rank whose receive completed may stop progressing (a bootstrap barrier, its own computation),
// and a FIN still queued behind credits would then never reach the sender.
int send_fin(Context *ctx, int peer, uint64_t send_id, uint64_t length, int status,
             Request *done = nullptr) {
  Outgoing fin;
  fin.type = MsgType::Fin;
  fin.req = done;
  fin.fin.send_id = send_id;
  fin.fin.length = length;
  fin.fin.status = status;
  enqueue(ctx, peer, class_for(ctx, sizeof(Header) + sizeof(FinBody)), std::move(fin));
  return BRAID_SUCCESS;
}

int post_reads(Context *ctx, Request *req) {
  Conn &conn = ctx->conn(req->peer, 0);
  uint64_t chunk = read_chunk(ctx);
  ibv_mr *mr = rendezvous_mr(req);
  while (req->reads_posted < req->reads_total && conn.sq_free > 0 && req->read_status == 0) {
    uint64_t offset = uint64_t{req->reads_posted} * chunk;
    uint64_t len = std::min(chunk, req->rts.length - offset);
    ibv_sge sge{reinterpret_cast<uint64_t>(req->buf + offset), static_cast<uint32_t>(len),
                mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = encode_wr_id(WrKind::Read, 0, conn.index, req->index);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = req->rts.addr + offset;
    wr.wr.rdma.rkey = req->rts.rkey;
    ibv_send_wr *bad = nullptr;
    int rc = ibv_post_send(conn.qp, &wr, &bad);
    if (rc != 0)
      return ctx->error(BRAID_ERR_TRANSPORT,
                        "verbs: rank %d: posting RDMA READ %u/%u (%llu bytes) from rank %d: %s",
                        ctx->rank, req->reads_posted + 1, req->reads_total,
                        static_cast<unsigned long long>(len), req->peer, std::strerror(rc));
    --conn.sq_free;
    ++req->reads_posted;
    ++ctx->counters.rdma_reads;
  }
  // The rest goes when the send queue has room again (flush_reads).
  if (req->reads_posted < req->reads_total && req->read_status == 0) ctx->reads_to_post = true;
  return BRAID_SUCCESS;
}

}  // namespace

void release_transient(Request *req, bool revoke) {
  if (req->transient_mr != nullptr) ibv_dereg_mr(req->transient_mr);
  req->transient_mr = nullptr;
  if (req->cached != nullptr) RegCache::release(req->cached, revoke);
  req->cached = nullptr;
}

int prepare_rendezvous_send(Context *ctx, Request *req) {
  if (!covers(req->user_mr, req->buf, req->bytes)) {
    int rc =
        register_for_rendezvous(ctx, req, req->bytes, IBV_ACCESS_REMOTE_READ, "a rendezvous send");
    if (rc != BRAID_SUCCESS) return rc;
  }
  ibv_mr *mr = rendezvous_mr(req);
  req->rts.addr = reinterpret_cast<uint64_t>(req->buf);
  req->rts.length = req->bytes;
  req->rts.send_id = req->id();
  req->rts.rkey = mr->rkey;
  return BRAID_SUCCESS;
}

int start_rendezvous_receive(Context *ctx, Request *req, const RtsBody &rts) {
  if (rts.length > req->bytes) {
    fail_request(ctx, req, BRAID_ERR_MISMATCH,
                 "verbs: rank " + std::to_string(ctx->rank) + ": the message from rank " +
                     std::to_string(req->peer) + " has " + std::to_string(rts.length) +
                     " bytes but the receive buffer holds " + std::to_string(req->bytes));
    return send_fin(ctx, req->peer, rts.send_id, 0, BRAID_ERR_MISMATCH);
  }
  if (!covers(req->user_mr, req->buf, rts.length)) {
    int rc = register_for_rendezvous(ctx, req, rts.length, IBV_ACCESS_LOCAL_WRITE,
                                     "a rendezvous receive");
    if (rc != BRAID_SUCCESS) {
      fail_request(ctx, req, rc, ctx->err != nullptr ? ctx->err : "registration failed");
      return send_fin(ctx, req->peer, rts.send_id, 0, BRAID_ERR_TRANSPORT);
    }
  }
  uint64_t chunk = read_chunk(ctx);
  req->rts = rts;
  req->reads_total = static_cast<uint32_t>((rts.length + chunk - 1) / chunk);
  req->state = ReqState::Reading;
  return post_reads(ctx, req);
}

int flush_reads(Context *ctx) {
  ctx->reads_to_post = false;  // post_reads sets it again for a request it cannot finish
  for (size_t i = 0; i < ctx->requests.size(); ++i) {
    Request *req = ctx->requests.at(static_cast<uint32_t>(i));
    if (req->kind != ReqKind::Recv || req->state != ReqState::Reading) continue;
    if (req->reads_posted == req->reads_total) continue;
    // A READ that cannot be posted fails this peer (its sender waits for a FIN that would never
    // come), not the other requests' READs.
    if (post_reads(ctx, req) != BRAID_SUCCESS)
      fail_peer_after(ctx, req->peer, BRAID_ERR_TRANSPORT, "verbs: ibv_post_send of a READ failed");
  }
  return BRAID_SUCCESS;
}

int on_read_complete(Context *ctx, Request *req, bool ok, int code, const std::string &why) {
  ++req->reads_done;
  if (!ok && req->read_status == 0) {
    req->read_status = code;
    req->error = why;
  }
  bool drained = req->reads_done == req->reads_posted;
  if (drained && req->free_when_done) {  // cancelled while READs were in flight (cancel.cpp)
    release_transient(req, true);
    ctx->requests.release(req);
    return BRAID_SUCCESS;
  }
  if (req->read_status != 0) {
    if (drained) {  // the device no longer writes into the buffer: now it may fail
      release_transient(req, true);
      req->status = req->read_status;
      req->state = ReqState::Failed;
    }
    return BRAID_SUCCESS;
  }
  if (req->reads_done < req->reads_total) return post_reads(ctx, req);
  release_transient(req);
  req->received = req->rts.length;
  return send_fin(ctx, req->peer, req->rts.send_id, req->rts.length, 0, req);
}

int on_fin(Context *ctx, int peer, const FinBody &fin) {
  Request *req = ctx->requests.find(fin.send_id);
  if (req == nullptr || req->kind != ReqKind::Send || req->peer != peer ||
      req->state != ReqState::WaitFin) {
    // A send cancelled meanwhile, or a FIN naming nothing of ours: nothing to release.
    ctx->logf(1, "verbs: rank %d: FIN from rank %d names no rendezvous in flight (id 0x%llx)",
              ctx->rank, peer, static_cast<unsigned long long>(fin.send_id));
    return BRAID_SUCCESS;
  }
  release_transient(req, fin.status != 0);
  if (fin.status != 0) {
    fail_request(ctx, req, BRAID_ERR_MISMATCH,
                 "verbs: rank " + std::to_string(ctx->rank) + ": rank " + std::to_string(peer) +
                     " refused a " + std::to_string(req->bytes) +
                     "-byte message: its receive buffer is shorter or could not be registered");
    return BRAID_SUCCESS;
  }
  req->state = ReqState::Done;
  return BRAID_SUCCESS;
}

}  // namespace braid::verbs
