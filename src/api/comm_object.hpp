// The objects behind the C handles. Comm is a communicator: a view over the process-wide
// context (its rank map, context id, call sequence, scheduler and node-local resources).
// braid_comm_s is the handle an application holds; braid_request_s one non-blocking call.
// Validation happens here, before anything is sent, so bad input fails at once on the calling
// rank and leaves the communicator usable.
#pragma once

#include <braid/braid.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/comm_node.hpp"
#include "api/process.hpp"
#include "control/call_log.hpp"
#include "control/control_watch.hpp"
#include "engine/scheduler.hpp"
#include "selection/selection.hpp"

namespace braid::detail {

class Comm {
 public:
  // `members[r]`: the world rank of communicator rank r; this rank is `rank`; `tag` as below.
  Comm(Process &process, std::vector<int> members, int rank, uint32_t context, uint64_t tag = 0);
  Comm(const Comm &) = delete;
  Comm &operator=(const Comm &) = delete;
  ~Comm();

  // Hands the communicator its node-local resources (collectives started later use them).
  void attach_node(std::unique_ptr<CommNode> node);

  // One thread at a time works on a communicator: its API calls (Use, blocking) and another
  // thread's idle wait progressing it (try_claim, skipping it when taken).
  bool try_claim() { return !busy_.exchange(true, std::memory_order_acquire); }
  void release() { busy_.store(false, std::memory_order_release); }
  class Use {
   public:
    explicit Use(Comm &c) : c_(c) {
      while (!c.try_claim()) std::this_thread::yield();
      c.process.note_thread();
    }
    Use(const Use &) = delete;
    Use &operator=(const Use &) = delete;
    ~Use() { c_.release(); }

   private:
    Comm &c_;
  };
  // Use if the communicator is free now, else nothing (held() false): for calls that must not
  // wait for another thread's call (braid_test).
  class TryUse {
   public:
    explicit TryUse(Comm &c) : c_(c), held_(c.try_claim()) {
      if (held_) c.process.note_thread();
    }
    TryUse(const TryUse &) = delete;
    TryUse &operator=(const TryUse &) = delete;
    ~TryUse() {
      if (held_) c_.release();
    }
    bool held() const { return held_; }

   private:
    Comm &c_;
    const bool held_;
  };

  Process &process;
  const std::vector<int> members;
  const int rank;
  const int size;
  const uint32_t context;
  // Tells this communicator apart from the others with its context id, alike on its members
  // (0 for the world): the control plane's notices carry it (split_tag, comm_split.cpp).
  const uint64_t tag;
  std::unique_ptr<CommNode> node;
  // The last selection made for each kind: applications repeat the same calls, and choosing
  // costs as much as a small node-local call (a benchmark's barrier between calls used to
  // evict a single cached choice every time). Reset when the topology changes.
  struct LastChoice {
    coll::CollKind kind = coll::CollKind::barrier;
    size_t bytes = SIZE_MAX;
    size_t count = SIZE_MAX;
    coll::Choice choice;
    coll::Choice inner;
  };
  std::array<LastChoice, coll::kKindCount> last_choice;
  uint64_t next_seq = 0;
  size_t open_requests = 0;  // non-blocking calls not yet completed through wait/test
  // A collective on it failed here: messages of that call may still be on their way or
  // unmatched, and would match the same call of a later communicator given this context id, so
  // the id is not given back when it is freed (Process::destroy).
  bool failed = false;
  // Set while a blocking call starts (BlockingCall): a small node-local one may then complete
  // inline (intranode/inline_call.hpp); a non-blocking one must return without waiting.
  bool blocking_call = false;
  class BlockingCall {
   public:
    explicit BlockingCall(Comm &c) : c_(c) { c.blocking_call = true; }
    BlockingCall(const BlockingCall &) = delete;
    BlockingCall &operator=(const BlockingCall &) = delete;
    ~BlockingCall() { c_.blocking_call = false; }

   private:
    Comm &c_;
  };
  CallLog calls;
  std::unique_ptr<ControlWatch> watch;
  std::atomic<bool> busy_{false};
  // Declared last, destroyed first: its collectives use the node channel, the members and the
  // watch.
  std::unique_ptr<coll::Scheduler> scheduler;
};

// The bytes of `count` elements of `dtype`; throws INVALID_ARGUMENT for an unknown dtype or an
// overflow, naming the rank and `what` (the collective).
size_t checked_bytes(Comm &comm, const char *what, size_t count, int dtype);
// braid_set_idle_callback's function, and calling it (from an idle wait).
void set_idle_callback(void (*fn)(void *), void *arg);
void run_idle_callback();
// Throws INVALID_ARGUMENT when `bytes` from `p` would run past the end of the address space
// (a count that fits in size_t but not in memory), naming `name` (sendbuf, recvbuf, buf).
void check_range(Comm &comm, const char *what, const char *name, const void *p, size_t bytes);
// What a reduction over a one-rank communicator leaves in `dst`: this rank's `count` elements
// of `src` as the op gives one contribution (the logical ops 0 or 1, the others the value).
void reduce_alone(void *dst, const void *src, size_t count, braid_dtype_t dtype, braid_op_t op);
// A call with nothing to send: it still takes its sequence number and is published.
std::shared_ptr<coll::Collective> empty_call(Comm &comm, const coll::CollArgs &args);
// Picks the algorithm for validated arguments and starts it.
std::shared_ptr<coll::Collective> launch(Comm &comm, coll::CollArgs args);

// Validate, pick the algorithm and start. Throw Failure on bad input. Return the running
// collective, or null when there is nothing to communicate (count 0, one rank).
std::shared_ptr<coll::Collective> start_allreduce(Comm &comm, const void *sendbuf, void *recvbuf,
                                                  size_t count, int dtype, int op);
std::shared_ptr<coll::Collective> start_broadcast(Comm &comm, void *buf, size_t count, int dtype,
                                                  int root);
std::shared_ptr<coll::Collective> start_barrier(Comm &comm);

// Waits for a started collective and throws its failure.
void finish(Comm &comm, const std::shared_ptr<coll::Collective> &c);

// Collective over `parent`: the members with the same color, ordered by (key, parent rank).
// Null for color BRAID_UNDEFINED.
Comm *split(Comm &parent, int color, int key);

}  // namespace braid::detail

// What the application holds. Handles outlive their communicators (they are pooled, never
// freed before exit), so a stale handle is recognised instead of read after free.
struct braid_comm_s {
  static constexpr uint32_t kLive = 0xb4a1dc01;
  std::atomic<uint32_t> magic{0};
  braid::detail::Comm *comm = nullptr;
};

struct braid_request_s {
  braid_comm_s *handle = nullptr;
  braid::detail::Comm *comm = nullptr;
  std::shared_ptr<braid::coll::Collective> collective;  // null for a call that had nothing to do
};
