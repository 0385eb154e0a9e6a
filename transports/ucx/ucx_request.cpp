#include "ucx_request.hpp"

#include <chrono>

namespace braid::ucx {
namespace {

void on_send_done(void *, ucs_status_t status, void *user_data) {
  auto *req = static_cast<Request *>(user_data);
  req->completed = true;
  req->status = status;
}

void on_recv_done(void *, ucs_status_t status, const ucp_tag_recv_info_t *info, void *user_data) {
  auto *req = static_cast<Request *>(user_data);
  req->completed = true;
  req->status = status;
  // On truncation too UCX gives the message's length, which the error then names.
  if ((status == UCS_OK || status == UCS_ERR_MESSAGE_TRUNCATED) && info != nullptr)
    req->received = info->length;
}

bool is_peer_failure(ucs_status_t st) {
  return st == UCS_ERR_ENDPOINT_TIMEOUT || st == UCS_ERR_CONNECTION_RESET ||
         st == UCS_ERR_UNREACHABLE || st == UCS_ERR_REJECTED || st == UCS_ERR_NOT_CONNECTED;
}

int peer_check(Context *ctx, int peer) {
  if (peer < 0 || peer >= ctx->size)
    return ctx->error(BRAID_ERR_INVALID_ARGUMENT, "ucx: peer %d out of range [0, %d)", peer,
                      ctx->size);
  ucs_status_t st = ctx->peer_status[static_cast<size_t>(peer)];
  if (st != UCS_OK)
    return ctx->error(BRAID_ERR_PEER_FAILED, "ucx: rank %d failed earlier: %s", peer,
                      ucs_status_string(st));
  return BRAID_SUCCESS;
}

// Turns the status nbx returned into either an immediate completion or a pending request.
int finish_post(Context *ctx, Request *req, ucs_status_ptr_t sp) {
  if (sp == nullptr) {
    req->completed = true;
    return BRAID_SUCCESS;
  }
  if (UCS_PTR_IS_ERR(sp)) {
    ucs_status_t st = UCS_PTR_STATUS(sp);
    int code = is_peer_failure(st) ? BRAID_ERR_PEER_FAILED : BRAID_ERR_TRANSPORT;
    const int peer = req->peer;
    const size_t bytes = req->bytes;
    const auto tag = static_cast<unsigned long long>(req->tag);
    const char *what = req->is_send ? "send to" : "receive from";
    delete req;
    return ctx->error(code, "ucx: %s rank %d of %zu bytes (tag %llu) failed: %s", what, peer, bytes,
                      tag, ucs_status_string(st));
  }
  req->ucp_request = sp;
  return BRAID_SUCCESS;
}

}  // namespace

int post_send(Context *ctx, int peer, uint64_t tag, const void *buf, size_t bytes, ucp_mem_h memh,
              Request **out) {
  if (int rc = peer_check(ctx, peer); rc != BRAID_SUCCESS) return rc;
  auto *req = new Request{ctx, true, peer, tag, bytes};
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = on_send_done;
  param.user_data = req;
  if (memh != nullptr) {
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    param.memh = memh;
  }
  ucs_status_ptr_t sp = ucp_tag_send_nbx(ctx->eps[static_cast<size_t>(peer)], buf, bytes,
                                         ucp_tag_for(tag, ctx->rank), &param);
  if (int rc = finish_post(ctx, req, sp); rc != BRAID_SUCCESS) return rc;
  ctx->live.insert(req);
  ctx->counters.sends++;
  ctx->counters.bytes_sent += bytes;
  *out = req;
  return BRAID_SUCCESS;
}

int post_recv(Context *ctx, int peer, uint64_t tag, void *buf, size_t bytes, ucp_mem_h memh,
              Request **out) {
  if (int rc = peer_check(ctx, peer); rc != BRAID_SUCCESS) return rc;
  auto *req = new Request{ctx, false, peer, tag, bytes};
  ucp_request_param_t param{};
  // UCX 1.13 leaves recv_info's length at 0 when a receive completes immediately (an eager
  // message that had already arrived), so immediate completion is refused: the callback then
  // always reports the received length.
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = on_recv_done;
  param.user_data = req;
  if (memh != nullptr) {
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    param.memh = memh;
  }
  // The full mask matches the sender's rank, carried in the tag's low bits.
  ucs_status_ptr_t sp = ucp_tag_recv_nbx(ctx->worker, buf, bytes, ucp_tag_for(tag, peer),
                                         ~static_cast<ucp_tag_t>(0), &param);
  if (int rc = finish_post(ctx, req, sp); rc != BRAID_SUCCESS) return rc;
  ctx->live.insert(req);
  ctx->counters.recvs++;
  *out = req;
  return BRAID_SUCCESS;
}

int test_request(Request *req, int *done, size_t *bytes) {
  Context *ctx = req->ctx;
  if (!req->completed) {
    *done = 0;
    return BRAID_SUCCESS;
  }
  *done = 1;
  if (req->ucp_request != nullptr) ucp_request_free(req->ucp_request);
  int rc = BRAID_SUCCESS;
  const char *dir = req->is_send ? "send to" : "receive from";
  if (req->status == UCS_ERR_MESSAGE_TRUNCATED) {
    rc =
        ctx->error(BRAID_ERR_MISMATCH,
                   "ucx: message of %zu bytes from rank %d (tag %llu) is longer than the "
                   "%zu-byte receive",
                   req->received, req->peer, static_cast<unsigned long long>(req->tag), req->bytes);
  } else if (req->status != UCS_OK) {
    rc = ctx->error(is_peer_failure(req->status) ? BRAID_ERR_PEER_FAILED : BRAID_ERR_TRANSPORT,
                    "ucx: %s rank %d of %zu bytes failed: %s", dir, req->peer, req->bytes,
                    ucs_status_string(req->status));
  } else if (!req->is_send) {
    ctx->counters.bytes_received += req->received;
    if (bytes != nullptr) *bytes = req->received;
  }
  ctx->live.erase(req);
  delete req;
  return rc;
}

int cancel_request(Request *req) {
  Context *ctx = req->ctx;
  if (!req->completed && req->ucp_request != nullptr) {
    ucp_request_cancel(ctx->worker, req->ucp_request);
    // UCP may still touch the buffer until the request completes; wait for that, bounded.
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration<double>(ctx->timeout_s > 0 ? ctx->timeout_s : 30);
    while (!req->completed && std::chrono::steady_clock::now() < deadline)
      ucp_worker_progress(ctx->worker);
  }
  ctx->counters.cancels++;
  if (req->ucp_request != nullptr) ucp_request_free(req->ucp_request);
  if (!req->completed) {
    // The completion callback may still run and write into *req, so it is deliberately leaked.
    return ctx->error(BRAID_ERR_TIMEOUT, "ucx: cancelled request to rank %d did not complete",
                      req->peer);
  }
  ctx->live.erase(req);
  delete req;
  return BRAID_SUCCESS;
}

}  // namespace braid::ucx
