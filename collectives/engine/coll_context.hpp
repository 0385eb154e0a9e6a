// CollContext: what one running collective sees of the network. Algorithms post tagged sends
// and receives to peers and `co_await` them; the engine polls the transport and resumes the
// algorithm. Messages larger than the transport's max_message are split here, transparently.
#pragma once

#include <braid/transport.h>

#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/chunk_requests.hpp"
#include "engine/scratch_pool.hpp"

namespace braid::detail {
class Transport;
}

namespace braid::coll {

using OpId = size_t;
class NodeChannel;

// What a peer copies before a wait counts as long: 1 MiB takes it about 100 us at CMA's rate.
constexpr size_t kLongWaitBytes = size_t{1} << 20;

// A wait on a 32-bit counter in node-local shared memory (or in this process): done once the
// counter has reached `target` (compared modulo 2^32, so counters may wrap).
struct FlagWait {
  const std::atomic<uint32_t> *word = nullptr;
  uint32_t target = 0;
  int peer = -1;                              // rank that will advance the counter; -1: this one
  int pid = 0;                                // its process (checked for exit while waiting), or 0
  std::atomic<uint32_t> *sleepers = nullptr;  // where a futex sleeper announces itself, or null
  const char *what = "";                      // for errors: what the peer has not done yet
  // The peer has much to copy first (kLongWaitBytes or more): a rank that shares its core
  // sleeps at once instead of yielding (Scheduler::wait).
  bool long_wait = false;
  bool reached() const {
    return static_cast<int32_t>(word->load(std::memory_order_acquire) - target) >= 0;
  }
};

class CollContext {
 public:
  using Clock = std::chrono::steady_clock;

  // `members[r]`: the transport's rank of communicator rank r (null: the same numbers).
  CollContext(detail::Transport &transport, ScratchPool &scratch, int rank, int size,
              uint64_t tag_base, double timeout_s, const int *members = nullptr);
  CollContext(const CollContext &) = delete;
  CollContext &operator=(const CollContext &) = delete;
  ~CollContext();

  int rank() const { return group_ ? group_rank_ : rank_; }
  // A scratch buffer reused across calls; released when the lease goes out of scope.
  ScratchPool::Lease scratch(size_t bytes) { return scratch_.acquire(bytes); }
  ScratchPool &scratch_pool() { return scratch_; }
  int size() const { return group_ ? group_size_ : size_; }

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

  struct FlagAwaiter {
    CollContext *ctx;
    FlagWait flag;
    bool await_ready() const { return flag.reached(); }
    void await_suspend(std::coroutine_handle<> h) { ctx->suspend_on_flag(h, flag); }
    void await_resume() const {}
  };
  FlagAwaiter wait_flag(const FlagWait &flag) { return FlagAwaiter{this, flag}; }

  // The node's shared-memory channel, or null when ranks do not share a node (or it is off).
  NodeChannel *node() const { return node_; }
  // The call's sequence number, for messages that name it.
  void set_seq(uint64_t seq) { seq_ = seq; }
  uint64_t seq() const { return seq_; }
  void set_node(NodeChannel *node) { node_ = node; }
  // Makes rank() / size() and the peers of send() / recv() refer to a group of ranks (e.g. one
  // leader per node): members[i] is the rank of group member i. use_world() undoes it.
  void use_group(const int *members, int size, int my_index) {
    group_ = members;
    group_size_ = size;
    group_rank_ = my_index;
  }
  void use_world() { group_ = nullptr; }
  // Added to every step from now on, so that consecutive sub-collectives of one call (e.g. one
  // per pipeline segment) use distinct tags. Steps wrap at 16 bits; where they collide the
  // transports' ordered matching (same peer and tag: posting order) still pairs them right.
  void set_step_base(uint32_t base) { step_base_ = base; }
  // Whether the suspended algorithm, not split in branches, waits on one flag marked long
  // (FlagWait::long_wait) whose owner wakes sleepers.
  bool blocked_long() const {
    const FlagWait *f = branched_ ? nullptr : blocked_on_flag();
    return f != nullptr && f->long_wait && f->sleepers != nullptr && !has_messages();
  }
  // What the suspended algorithm waits for when it waits on a flag, else null (the scheduler
  // sleeps on it); with two branches, preferably a flag another rank will advance.
  const FlagWait *blocked_on_flag() const {
    if (!branched_) return waits_[0].handle && waits_[0].flag.word ? &waits_[0].flag : nullptr;
    return branched_blocked_on_flag();
  }
  // True when messages are outstanding.
  bool has_messages() const { return outstanding_ != 0; }

  // Two branches of one algorithm in flight at once (see engine/branches.hpp). While branches
  // run, each suspended branch has a wait slot of its own (its own flag or message, its own
  // deadline), and only one branch may send or receive: wait_all() and the ops table are shared.
  static constexpr int kBranches = 2;
  void begin_branches();
  void enter_branch(int branch) { current_ = branch; }
  void end_branches();

  // Engine side.
  // Tests outstanding requests; throws Failure for a failed one. Returns true if any completed.
  bool poll();
  // The suspended algorithm, if what it waits for is complete (and clears it), else null.
  std::coroutine_handle<> take_ready();
  // Throws Failure(BRAID_ERR_TIMEOUT) naming the peer waited for when the wait is too long.
  void check_deadline() const;
  // Ends every outstanding request, so buffers may be released: receives are cancelled (the
  // plugin waits until it no longer writes into them), except those from `failed_peer`, a transport
  // rank whose process is gone; sends are abandoned (see Transport::abandon). Returns whether
  // a send was abandoned: the transport may then still read its buffer.
  bool cancel_all(int failed_peer = -1) noexcept;

  // The v-variants: a message whose size differs from the receive means the ranks' counts
  // disagree; `text(peer, step, got, expected)` (bytes; got == kLonger when the transport only
  // said "longer") names the counts on both sides, and the call fails with that disagreement.
  static constexpr size_t kLonger = SIZE_MAX;
  using SizeMismatchText = std::function<std::string(int, uint32_t, size_t, size_t)>;
  void on_size_mismatch(SizeMismatchText text) { size_mismatch_ = std::move(text); }

 private:
  struct Op {
    int peer;  // communicator rank, as errors name it
    bool is_send;
    uint32_t step;
    size_t bytes;
    size_t received = 0;
    ChunkRequests pending;  // one per chunk still outstanding
  };

  // One suspended coroutine and what it waits for: the algorithm's, or one per branch.
  struct Wait {
    std::coroutine_handle<> handle;
    OpId awaited = kAll;
    FlagWait flag{};              // set while suspended on a flag
    Clock::time_point started{};  // zero until the wait's first deadline check
    unsigned deadline_checks = 0;
    Clock::time_point next_exit_check{};
  };

  Op &push_op(Op &&op);  // listed and counted outstanding; its chunks are posted after
  bool complete(OpId id) const;
  void suspend(std::coroutine_handle<> h, OpId id);
  void suspend_on_flag(std::coroutine_handle<> h, const FlagWait &flag);
  static void start_wait_clock(Wait &w);
  std::coroutine_handle<> take_ready(Wait &w);
  // Throws when `w` has waited too long; `other` is the other branch's wait, if any.
  void check_deadline(Wait &w, const Wait *other) const;
  [[noreturn]] void fail_wait(const Wait &w, double waited) const;
  const FlagWait *branched_blocked_on_flag() const;
  void claim_ops();
  // The communicator rank of a peer named by the algorithm (group_ maps group members).
  int comm_peer(int peer) const { return group_ ? group_[peer] : peer; }
  int transport_peer(int comm_rank) const { return members_ ? members_[comm_rank] : comm_rank; }
  // After wait_all every id is consumed, so the table restarts and stays small.
  void resumed(OpId id) {
    if (id == kAll) ops_.clear();
  }
  void finish_op(Op &op);
  uint64_t tag(uint32_t step) const { return tag_base_ | ((step + step_base_) & 0xffffu); }

  detail::Transport &transport_;
  ScratchPool &scratch_;
  int rank_;
  int size_;
  uint64_t tag_base_;
  uint64_t seq_ = 0;
  uint32_t step_base_ = 0;
  double timeout_s_;
  size_t max_message_;
  std::vector<Op> ops_;
  size_t outstanding_ = 0;  // operations with pending requests
  SizeMismatchText size_mismatch_;
  // [0]: the algorithm (or its first branch); [1]: the second branch while branches run.
  mutable Wait waits_[kBranches];
  int current_ = 0;  // the wait slot of the coroutine running now
  bool branched_ = false;
  int ops_branch_ = -1;  // the branch that sends and receives while branches run
  NodeChannel *node_ = nullptr;
  const int *group_ = nullptr;
  const int *members_ = nullptr;
  int group_size_ = 0;
  int group_rank_ = 0;
};

}  // namespace braid::coll
