#include "engine/coll_context.hpp"

#include <signal.h>

#include <algorithm>
#include <cerrno>

#include "comm/transport.hpp"
#include "error.hpp"

namespace braid::coll {

using detail::fail;

CollContext::CollContext(detail::Transport &transport, ScratchPool &scratch, int rank, int size,
                         uint64_t tag_base, double timeout_s)
    : transport_(transport),
      scratch_(scratch),
      rank_(rank),
      size_(size),
      tag_base_(tag_base),
      timeout_s_(timeout_s),
      max_message_(transport.props().max_message) {}

CollContext::~CollContext() {
  cancel_all();
}

OpId CollContext::send(int peer, const void *buf, size_t bytes, uint32_t step) {
  peer = world_peer(peer);
  Op op{peer, true, step, bytes, 0, {}};
  const auto *p = static_cast<const char *>(buf);
  // Inside braid-allocated memory (braid_mem_alloc, scratch): registered once per communicator.
  braid_transport_mr_t mr = bytes > 0 ? transport_.registration(buf, bytes) : nullptr;
  // A zero-byte message is still one message: the receiver waits for it.
  size_t offset = 0;
  do {
    size_t n = std::min(bytes - offset, max_message_);
    op.pending.push_back(transport_.isend(peer, tag(step), p + offset, n, mr));
    offset += n;
  } while (offset < bytes);
  ops_.push_back(std::move(op));
  ++outstanding_;
  return ops_.size() - 1;
}

OpId CollContext::recv(int peer, void *buf, size_t bytes, uint32_t step) {
  peer = world_peer(peer);
  Op op{peer, false, step, bytes, 0, {}};
  auto *p = static_cast<char *>(buf);
  braid_transport_mr_t mr = bytes > 0 ? transport_.registration(buf, bytes) : nullptr;
  size_t offset = 0;
  do {
    size_t n = std::min(bytes - offset, max_message_);
    op.pending.push_back(transport_.irecv(peer, tag(step), p + offset, n, mr));
    offset += n;
  } while (offset < bytes);
  ops_.push_back(std::move(op));
  ++outstanding_;
  return ops_.size() - 1;
}

bool CollContext::complete(OpId id) const {
  if (id == kAll) return outstanding_ == 0;
  return ops_[id].pending.empty();
}

void CollContext::suspend(std::coroutine_handle<> h, OpId id) {
  waiter_ = h;
  awaited_ = id;
  start_wait_clock();
}

void CollContext::start_wait_clock() {
  // The clock is first read at the wait's 16th deadline check, not here: most waits end within
  // a few polls, and reading the clock costs as much as a poll.
  wait_started_ = Clock::time_point{};
  deadline_checks_ = 1;
}

void CollContext::suspend_on_flag(std::coroutine_handle<> h, const FlagWait &flag) {
  waiter_ = h;
  flag_ = flag;
  start_wait_clock();
}

void CollContext::finish_op(Op &op) {
  --outstanding_;
  if (!op.is_send && op.received != op.bytes)
    fail(BRAID_ERR_MISMATCH, "rank ", op.peer, " sent ", op.received, " bytes where rank ", rank_,
         " expected ", op.bytes, " (message ", op.step, ")");
}

bool CollContext::poll() {
  if (outstanding_ == 0) return false;
  bool any = false;
  for (Op &op : ops_) {
    if (op.pending.empty()) continue;
    // Chunks of one message complete in order; test from the front.
    while (!op.pending.empty()) {
      size_t got = 0;
      braid_transport_req_t req = op.pending.front();
      bool done = false;
      try {
        done = transport_.test(req, &got);
      } catch (...) {
        // The transport freed the failed request: it must not be cancelled later.
        op.pending.erase(op.pending.begin());
        --outstanding_;
        throw;
      }
      if (!done) break;
      op.pending.erase(op.pending.begin());
      op.received += got;
      any = true;
    }
    if (op.pending.empty()) finish_op(op);
  }
  return any;
}

std::coroutine_handle<> CollContext::take_ready() {
  if (!waiter_) return {};
  if (flag_.word != nullptr) {
    if (!flag_.reached()) return {};
    flag_ = FlagWait{};
  } else if (!complete(awaited_)) {
    return {};
  }
  return std::exchange(waiter_, {});
}

void CollContext::check_deadline() const {
  if (!waiter_) return;
  // Every 16th check looks at the clock (a check follows every poll pass; while the scheduler
  // sleeps, a pass takes at most a millisecond).
  if (deadline_checks_++ % 16 != 0) return;
  const auto now = Clock::now();
  if (wait_started_ == Clock::time_point{}) {
    wait_started_ = now;
    next_exit_check_ = now + std::chrono::milliseconds(100);
    return;
  }
  double waited = std::chrono::duration<double>(now - wait_started_).count();
  if (flag_.word != nullptr) {
    // A rank of this node that exited will never advance the counter: say so at once rather
    // than at the deadline.
    if (flag_.pid > 0 && now >= next_exit_check_) {
      next_exit_check_ = now + std::chrono::milliseconds(100);
      if (kill(flag_.pid, 0) != 0 && errno == ESRCH && !flag_.reached())
        fail(BRAID_ERR_PEER_FAILED, "rank ", flag_.peer, " (pid ", flag_.pid,
             ", same node) exited while rank ", rank_, " waited for it to ", flag_.what);
    }
    if (waited < timeout_s_) return;
    if (flag_.peer < 0)
      fail(BRAID_ERR_TIMEOUT, "timed out after ", waited, " s waiting for an earlier collective");
    fail(BRAID_ERR_TIMEOUT, "timed out after ", waited, " s waiting for rank ", flag_.peer,
         " (same node, shared memory) to ", flag_.what);
  }
  if (waited < timeout_s_) return;
  for (const Op &op : ops_) {
    if (op.pending.empty()) continue;
    if (awaited_ != kAll && &op != &ops_[awaited_]) continue;
    fail(BRAID_ERR_TIMEOUT, "timed out after ", waited, " s waiting for rank ", op.peer, " (",
         op.is_send ? "send of " : "receive of ", op.bytes, " bytes, message ", op.step, ")");
  }
  fail(BRAID_ERR_TIMEOUT, "timed out after ", waited, " s");
}

void CollContext::cancel_all(int failed_peer) noexcept {
  for (Op &op : ops_) {
    for (braid_transport_req_t req : op.pending) {
      if (op.is_send || op.peer == failed_peer)
        transport_.abandon(req);
      else
        transport_.cancel(req);
    }
    op.pending.clear();
  }
  ops_.clear();
  outstanding_ = 0;
  waiter_ = {};
  flag_ = FlagWait{};
}

}  // namespace braid::coll
