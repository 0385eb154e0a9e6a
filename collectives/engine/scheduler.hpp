// Scheduler: the collectives in flight on one communicator. Any wait advances all of them, in
// the order they were started, because a peer may need this rank's progress on an earlier
// non-blocking collective before it can serve the one being waited for.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/collective.hpp"
#include "engine/peer_watch.hpp"
#include "engine/scratch_pool.hpp"

namespace braid::coll {

class Sleeper;  // intranode/futex.hpp

class Scheduler {
 public:
  // `oversubscribed`: more ranks on this host than cores this process may run on. Then an idle
  // rank yields at once instead of spinning, because the peer it waits for needs the core.
  // `numa_node`: the rank's node, where scratch buffers go (-1: not bound). `node`: the node's
  // shared-memory channel handed to every collective (null: none).
  // `members`: the transport rank of every communicator rank (null: the same numbers);
  // `context`: the communicator's context id, below kMaxContexts, carried in every tag so that
  // communicators sharing the transport never match each other's messages.
  Scheduler(detail::Transport &transport, int rank, int size, double timeout_s, bool oversubscribed,
            int numa_node = -1, NodeChannel *node = nullptr, const int *members = nullptr,
            uint32_t context = 0);
  // Ends the collectives still in flight (their communicator goes: braid_finalize, or a unique-id
  // group's communicator freed with its children's requests open), cancelling their messages
  // while the transport is still there; their requests then report it.
  ~Scheduler();
  Scheduler(const Scheduler &) = delete;
  Scheduler &operator=(const Scheduler &) = delete;
  static constexpr unsigned kContextBits = 10;
  static constexpr uint32_t kMaxContexts = 1u << kContextBits;
  // The node channel, once the communicator has set it up (collectives started later use it).
  void set_node(NodeChannel *node) { node_ = node; }
  // Called while a wait is idle, so that collectives of other communicators of this process
  // progress too (a peer may need them before it can serve the one waited for).
  void set_idle_hook(std::function<void()> hook) { idle_hook_ = std::move(hook); }
  // Whether other communicators may have collectives that only this thread's idle hook drives:
  // a long wait then yields as any wait (a sleep slice would hold them up).
  void set_others_hook(std::function<bool()> others) { others_ = std::move(others); }

  // Starts a collective: its first step runs now. `seq` is the communicator's sequence number
  // of this call, which all ranks agree on because they call collectives in the same order.
  std::shared_ptr<Collective> start(const CallLabel &label, AlgorithmFn algorithm, CollArgs args,
                                    uint64_t seq);
  // One non-blocking pass: transport progress, then every active collective. Returns whether
  // anything moved.
  bool progress();
  // Call `seq` ran to completion outside the scheduler (intranode/inline_call.hpp).
  void note_started(uint64_t seq) { started_ = std::max(started_, seq + 1); }
  // Call `seq` was refused before it started, because another rank had reported a
  // disagreement about it and then failed: its notice is settled here.
  void note_refused(uint64_t seq) {
    started_ = std::max(started_, seq + 1);
    settle(seq);
  }
  // Progresses until `c` finishes, spinning briefly, then yielding, then sleeping on the
  // transport's wait mechanism, so oversubscribed ranks leave the cores to those with work.
  void wait(Collective &c);
  size_t active() const { return active_.size(); }
  const ScratchPool &scratch() const { return scratch_; }
  // Applies what the watch has learned (a failed rank, a disagreement reported by another rank)
  // to the collectives in flight. Cheap when nothing is new.
  void check_peers() {
    if (watch_) watch_peers();
  }
  // Set once another rank reported a disagreement about a collective this rank had already
  // completed: the ranks are out of step, so every later call fails with it.
  const std::string &out_of_step() const { return out_of_step_; }
  // Where failures of other ranks and disagreements are learned (none: data path only).
  void set_watch(PeerWatch *watch) { watch_ = watch; }

  // Bits of the tag that carry a hash of the call's signature (kind, count, dtype, op, root),
  // so messages of ranks that disagree do not match each other: the disagreement stalls
  // instead of delivering misread data, and the stall is diagnosed. 0 with narrow tags.
  unsigned signature_bits() const { return sig_bits_; }

 private:
  // Sleeps until something may have changed: on a shared-memory flag when every collective
  // waits on one (`sleeper` stays announced to its owner until wait makes progress), else on
  // the transport. `long_idle`: the wait has lasted kHomeAfter, which the
  // announcement on a flag says to the waker (node/home_cpu.hpp).
  void sleep(Sleeper &sleeper, bool long_idle);
  // Whether `c`, the only collective in flight here or on another communicator, waits on
  // nothing but a flag marked long (FlagWait::long_wait).
  bool long_wait(const Collective &c) const;

  detail::Transport &transport_;
  int rank_;
  int size_;
  double timeout_s_;
  unsigned seq_bits_;
  bool oversubscribed_;
  unsigned sig_bits_;
  PeerWatch *watch_ = nullptr;
  uint64_t notices_seen_ = 0;
  uint64_t started_ = 0;  // collectives started or refused (highest seq + 1)
  // Recent calls that did not complete here (they failed, whatever the error, or were
  // refused) or whose notice was applied: a notice about one of them needs nothing more. Each
  // notice is applied once, not at every later notice of the process.
  std::vector<uint64_t> settled_;
  std::string out_of_step_;
  void settle(uint64_t seq);
  bool settled(uint64_t seq) const {
    return std::find(settled_.begin(), settled_.end(), seq) != settled_.end();
  }
  unsigned idle_passes_ = 0;  // progress() passes without progress since the last check
  std::chrono::steady_clock::time_point idle_since_{};
  std::chrono::steady_clock::time_point next_check_{};

  // Transport progress; a failure of the whole transport ends every call in flight.
  void progress_transport();
  // The sequence number of the oldest call not finished (UINT64_MAX: none).
  uint64_t oldest_in_flight() const;
  // Whether `c` must not start yet: too far ahead of `oldest` for the tags (start()).
  bool held_back(const Collective &c, uint64_t oldest) const;
  // One pass over the calls in flight, starting those held back once they may.
  void advance_all(bool *progressed);
  void watch_peers();
  void apply_notices();
  void explain_failures(const std::vector<std::shared_ptr<Collective>> &finished);
  // The rank failure the control plane knows of, waiting briefly for it; nullopt if none.
  std::optional<std::string> first_failure() const;
  void suspect_stall(std::chrono::steady_clock::time_point now);
  NodeChannel *node_;
  const int *members_;
  uint64_t context_part_;
  std::function<void()> idle_hook_;
  std::function<bool()> others_;
  unsigned passes_ = 0;
  ScratchPool scratch_;  // declared before active_: outlives the collectives using it
  std::vector<std::shared_ptr<Collective>> active_;
};

}  // namespace braid::coll
