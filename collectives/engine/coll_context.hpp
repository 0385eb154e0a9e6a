// CollContext: what one running collective sees of the network. Algorithms post tagged sends
// and receives to peers and `co_await` them; the engine polls the transport and resumes the
// algorithm. Messages larger than the transport's max_message are split here, transparently.
#pragma once

#include <braid/transport.h>

#include <chrono>
#include <coroutine>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/scratch_pool.hpp"

namespace braid::detail {
class Transport;
}

namespace braid::coll {

using OpId = size_t;

class CollContext {
 public:
  using Clock = std::chrono::steady_clock;

  CollContext(detail::Transport &transport, ScratchPool &scratch, int rank, int size,
              uint64_t tag_base, double timeout_s);
  CollContext(const CollContext &) = delete;
  CollContext &operator=(const CollContext &) = delete;
  ~CollContext();

  int rank() const { return rank_; }
  // A scratch buffer reused across calls; released when the lease goes out of scope.
  ScratchPool::Lease scratch(size_t bytes) { return scratch_.acquire(bytes); }
  int size() const { return size_; }

  // `step` distinguishes the messages of one collective between the same two ranks; sender and
  // receiver must use the same value. Both sides must agree on `bytes`: a receive that gets
  // fewer bytes than posted is a BRAID_ERR_MISMATCH naming the peer and both sizes.
  OpId send(int peer, const void *buf, size_t bytes, uint32_t step);
  OpId recv(int peer, void *buf, size_t bytes, uint32_t step);

  struct Awaiter {
    CollContext *ctx;
    OpId id;  // kAll for every outstanding operation
    bool await_ready() const { return ctx->complete(id); }
    void await_suspend(std::coroutine_handle<> h) { ctx->suspend(h, id); }
    void await_resume() const { ctx->resumed(id); }
  };
  static constexpr OpId kAll = ~OpId{0};
  Awaiter wait(OpId id) { return Awaiter{this, id}; }
  Awaiter wait_all() { return Awaiter{this, kAll}; }

  // Engine side.
  // Tests outstanding requests; throws Failure for a failed one. Returns true if any completed.
  bool poll();
  // The suspended algorithm, if what it waits for is complete (and clears it), else null.
  std::coroutine_handle<> take_ready();
  // Throws Failure(BRAID_ERR_TIMEOUT) naming the peer waited for when the wait is too long.
  void check_deadline() const;
  // Ends every outstanding request, so buffers may be released: receives are cancelled (the
  // plugin waits until it no longer writes into them), except those from `failed_peer`, a rank
  // whose process is gone; sends are abandoned (see Transport::abandon).
  void cancel_all(int failed_peer = -1) noexcept;

 private:
  struct Op {
    int peer;
    bool is_send;
    uint32_t step;
    size_t bytes;
    size_t received = 0;
    std::vector<braid_transport_req_t> pending;  // one per chunk still outstanding
  };

  bool complete(OpId id) const;
  void suspend(std::coroutine_handle<> h, OpId id);
  // After wait_all every id is consumed, so the table restarts and stays small.
  void resumed(OpId id) {
    if (id == kAll) ops_.clear();
  }
  void finish_op(Op &op);
  uint64_t tag(uint32_t step) const { return tag_base_ | (step & 0xffffu); }

  detail::Transport &transport_;
  ScratchPool &scratch_;
  int rank_;
  int size_;
  uint64_t tag_base_;
  double timeout_s_;
  size_t max_message_;
  std::vector<Op> ops_;
  size_t outstanding_ = 0;  // operations with pending requests
  std::coroutine_handle<> waiter_;
  OpId awaited_ = kAll;
  Clock::time_point wait_started_{};
};

}  // namespace braid::coll
