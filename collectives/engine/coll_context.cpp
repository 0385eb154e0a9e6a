#include "engine/coll_context.hpp"

#include <signal.h>

#include <algorithm>
#include <cerrno>

#include "comm/transport.hpp"
#include "error.hpp"

namespace braid::coll {

using detail::fail;

CollContext::CollContext(detail::Transport &transport, ScratchPool &scratch, int rank, int size,
                         uint64_t tag_base, double timeout_s, const int *members)
    : transport_(transport),
      scratch_(scratch),
      rank_(rank),
      size_(size),
      tag_base_(tag_base),
      timeout_s_(timeout_s),
      max_message_(transport.props().max_message),
      members_(members) {}

CollContext::~CollContext() {
  cancel_all();
}

OpId CollContext::send(int peer, const void *buf, size_t bytes, uint32_t step) {
  if (branched_) claim_ops();
  peer = comm_peer(peer);
  const int to = transport_peer(peer);
  const auto *p = static_cast<const char *>(buf);
  // Inside braid-allocated memory (braid_mem_alloc, scratch): registered once per communicator.
  braid_transport_mr_t mr = bytes > 0 ? transport_.registration(buf, bytes) : nullptr;
  Op &op = push_op(Op{peer, true, step, bytes, 0, {}});
  // A zero-byte message is still one message: the receiver waits for it. Past max_message_
  // the message goes in chunks of exactly max_message_ and a last one shorter than that (zero
  // bytes when the size is a multiple), on both sides: so a sender and a receiver that
  // disagree on the size always disagree on some chunk, which says so.
  for (size_t offset = 0;; offset += max_message_) {
    const size_t n = std::min(bytes - offset, max_message_);
    const bool last = n < max_message_;
    op.pending.push_back(transport_.isend(to, tag(step), p + offset, n, mr));
    if (last) break;
  }
  return ops_.size() - 1;
}

OpId CollContext::recv(int peer, void *buf, size_t bytes, uint32_t step) {
  if (branched_) claim_ops();
  peer = comm_peer(peer);
  const int from = transport_peer(peer);
  auto *p = static_cast<char *>(buf);
  braid_transport_mr_t mr = bytes > 0 ? transport_.registration(buf, bytes) : nullptr;
  Op &op = push_op(Op{peer, false, step, bytes, 0, {}});
  for (size_t offset = 0;; offset += max_message_) {  // chunks as send() makes them
    const size_t n = std::min(bytes - offset, max_message_);
    const bool last = n < max_message_;
    op.pending.push_back(transport_.irecv(from, tag(step), p + offset, n, mr));
    if (last) break;
  }
  return ops_.size() - 1;
}

CollContext::Op &CollContext::push_op(Op &&op) {
  // A collective over the transport posts a few messages a call: room for four at the first
  // (one allocation, not a growing chain of them); none for the calls that post nothing.
  if (ops_.capacity() == 0) ops_.reserve(4);
  // Listed before its chunks are posted: when posting a later chunk throws, the earlier ones
  // are cancelled with the rest (cancel_all), not left with the plugin holding the buffer.
  ops_.push_back(std::move(op));
  ++outstanding_;
  return ops_.back();
}

bool CollContext::complete(OpId id) const {
  if (id == kAll) return outstanding_ == 0;
  return ops_[id].pending.empty();
}

void CollContext::suspend(std::coroutine_handle<> h, OpId id) {
  Wait &w = waits_[current_];
  w.handle = h;
  w.awaited = id;
  start_wait_clock(w);
}

void CollContext::start_wait_clock(Wait &w) {
  // The clock is first read at the wait's 16th deadline check, not here: most waits end within
  // a few polls, and reading the clock costs as much as a poll.
  w.started = Clock::time_point{};
  w.deadline_checks = 1;
}

void CollContext::suspend_on_flag(std::coroutine_handle<> h, const FlagWait &flag) {
  Wait &w = waits_[current_];
  w.handle = h;
  w.flag = flag;
  start_wait_clock(w);
}

void CollContext::begin_branches() {
  // Nested branches would need more wait slots; no algorithm needs them.
  if (branched_) fail(BRAID_ERR_INTERNAL, "branches started inside a branch");
  branched_ = true;
  current_ = 0;
  ops_branch_ = -1;
}

void CollContext::end_branches() {
  // A branch that failed ends the other one where it stands: forget its wait (its frame goes
  // with the awaiting parent; its messages are cancelled when the collective finishes).
  for (Wait &w : waits_) w = Wait{};
  branched_ = false;
  current_ = 0;
  ops_branch_ = -1;
}

void CollContext::claim_ops() {
  // Both branches would share one ops table, and wait_all() of one would consume the other's.
  if (ops_branch_ < 0) ops_branch_ = current_;
  if (ops_branch_ != current_)
    fail(BRAID_ERR_INTERNAL, "two branches of one collective both use the transport");
}

const FlagWait *CollContext::branched_blocked_on_flag() const {
  // A flag of this process (peer -1) only moves when this process runs: sleep on another's.
  const FlagWait *any = nullptr;
  for (const Wait &w : waits_) {
    if (!w.handle || w.flag.word == nullptr) continue;
    if (w.flag.sleepers != nullptr) return &w.flag;
    if (any == nullptr) any = &w.flag;
  }
  return any;
}

void CollContext::finish_op(Op &op) {
  --outstanding_;
  if (!op.is_send && op.received != op.bytes && size_mismatch_)
    throw detail::Disagreement(size_mismatch_(op.peer, op.step, op.received, op.bytes));
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
      } catch (const detail::Failure &f) {
        // The transport freed the failed request: it must not be cancelled later.
        op.pending.pop_front();
        --outstanding_;
        if (f.code() == BRAID_ERR_MISMATCH && size_mismatch_ && !op.is_send)
          throw detail::Disagreement(size_mismatch_(op.peer, op.step, kLonger, op.bytes));
        throw;
      } catch (...) {
        op.pending.pop_front();
        --outstanding_;
        throw;
      }
      if (!done) break;
      op.pending.pop_front();
      op.received += got;
      any = true;
      // A full chunk that came short was the sender's last: it sent op.received bytes in all,
      // and the receives still posted will never be matched.
      if (!op.is_send && !op.pending.empty() && got != max_message_) {
        if (size_mismatch_)
          throw detail::Disagreement(size_mismatch_(op.peer, op.step, op.received, op.bytes));
        fail(BRAID_ERR_MISMATCH, "rank ", op.peer, " sent ", op.received, " bytes where rank ",
             rank_, " expected ", op.bytes, " (message ", op.step, ")");
      }
    }
    if (op.pending.empty()) finish_op(op);
  }
  return any;
}

std::coroutine_handle<> CollContext::take_ready(Wait &w) {
  if (!w.handle) return {};
  if (w.flag.word != nullptr) {
    if (!w.flag.reached()) return {};
    w.flag = FlagWait{};
  } else if (!complete(w.awaited)) {
    return {};
  }
  return std::exchange(w.handle, {});
}

std::coroutine_handle<> CollContext::take_ready() {
  if (auto h = take_ready(waits_[0])) {
    current_ = 0;
    return h;
  }
  if (!branched_) return {};
  if (auto h = take_ready(waits_[1])) {
    current_ = 1;
    return h;
  }
  return {};
}

void CollContext::check_deadline() const {
  if (!branched_) {
    check_deadline(waits_[0], nullptr);
    return;
  }
  check_deadline(waits_[0], &waits_[1]);
  check_deadline(waits_[1], &waits_[0]);
}

void CollContext::check_deadline(Wait &w, const Wait *other) const {
  if (!w.handle) return;
  // Every 16th check looks at the clock (a check follows every poll pass; while the scheduler
  // sleeps, a pass takes at most a millisecond).
  if (w.deadline_checks++ % 16 != 0) return;
  const auto now = Clock::now();
  if (w.started == Clock::time_point{}) {
    w.started = now;
    w.next_exit_check = now + std::chrono::milliseconds(100);
    return;
  }
  const FlagWait &flag = w.flag;
  if (flag.word != nullptr && flag.pid > 0 && now >= w.next_exit_check) {
    // A rank of this node that exited will never advance the counter: say so at once rather
    // than at the deadline.
    w.next_exit_check = now + std::chrono::milliseconds(100);
    if (kill(flag.pid, 0) != 0 && errno == ESRCH && !flag.reached())
      fail(BRAID_ERR_PEER_FAILED, "rank ", flag.peer, " (pid ", flag.pid,
           ", same node) exited while rank ", rank_, " waited for it to ", flag.what);
  }
  const double waited = std::chrono::duration<double>(now - w.started).count();
  if (waited < timeout_s_) return;
  // A branch waiting for the other branch of this rank is stuck because that one is: name
  // what the other one waits for (a peer), not this rank.
  if (flag.word != nullptr && flag.peer < 0 && other != nullptr && other->handle)
    fail_wait(*other, waited);
  fail_wait(w, waited);
}

void CollContext::fail_wait(const Wait &w, double waited) const {
  const FlagWait &flag = w.flag;
  if (flag.word != nullptr) {
    if (flag.peer < 0 && *flag.what == '\0')
      fail(BRAID_ERR_TIMEOUT, "timed out after ", waited, " s waiting for an earlier collective");
    if (flag.peer < 0)
      fail(BRAID_ERR_TIMEOUT, "timed out after ", waited, " s waiting for rank ", rank_,
           " itself to ", flag.what, " (an internal stall)");
    fail(BRAID_ERR_TIMEOUT, "timed out after ", waited, " s waiting for rank ", flag.peer,
         " (same node, shared memory) to ", flag.what);
  }
  for (const Op &op : ops_) {
    if (op.pending.empty()) continue;
    if (w.awaited != kAll && &op != &ops_[w.awaited]) continue;
    fail(BRAID_ERR_TIMEOUT, "timed out after ", waited, " s waiting for rank ", op.peer, " (",
         op.is_send ? "send of " : "receive of ", op.bytes, " bytes, message ", op.step, ")");
  }
  fail(BRAID_ERR_TIMEOUT, "timed out after ", waited, " s");
}

bool CollContext::cancel_all(int failed_peer) noexcept {
  bool abandoned_sends = false;
  for (Op &op : ops_) {
    op.pending.for_each([&](braid_transport_req_t req) {
      abandoned_sends = abandoned_sends || op.is_send;
      if (op.is_send || transport_peer(op.peer) == failed_peer)
        transport_.abandon(req);
      else
        transport_.cancel(req);
    });
    op.pending.clear();
  }
  ops_.clear();
  outstanding_ = 0;
  for (Wait &w : waits_) w = Wait{};
  branched_ = false;
  current_ = 0;
  ops_branch_ = -1;
  return abandoned_sends;
}

}  // namespace braid::coll
