// Scheduler: the collectives in flight on one communicator. Any wait advances all of them, in
// the order they were started, because a peer may need this rank's progress on an earlier
// non-blocking collective before it can serve the one being waited for.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/collective.hpp"
#include "engine/scratch_pool.hpp"

namespace braid::coll {

class Scheduler {
 public:
  // `oversubscribed`: more ranks on this host than cores this process may run on. Then an idle
  // rank yields at once instead of spinning, because the peer it waits for needs the core.
  // `node`: the node's shared-memory channel handed to every collective (null: none).
  Scheduler(detail::Transport &transport, int rank, int size, double timeout_s, bool oversubscribed,
            NodeChannel *node = nullptr);

  // Starts a collective: its first step runs now. `seq` is the communicator's sequence number
  // of this call, which all ranks agree on because they call collectives in the same order.
  std::shared_ptr<Collective> start(const CallLabel &label, AlgorithmFn algorithm, CollArgs args,
                                    uint64_t seq);
  // One non-blocking pass: transport progress, then every active collective. Returns whether
  // anything moved.
  bool progress();
  // Progresses until `c` finishes, spinning briefly, then yielding, then sleeping on the
  // transport's wait mechanism, so oversubscribed ranks leave the cores to those with work.
  void wait(Collective &c);
  size_t active() const { return active_.size(); }

 private:
  // Sleeps until something may have changed: on a shared-memory flag when every collective
  // waits on one, else on the transport.
  void sleep();

  detail::Transport &transport_;
  int rank_;
  int size_;
  double timeout_s_;
  unsigned seq_bits_;
  bool oversubscribed_;
  NodeChannel *node_;
  unsigned passes_ = 0;
  ScratchPool scratch_;  // declared before active_: outlives the collectives using it
  std::vector<std::shared_ptr<Collective>> active_;
};

}  // namespace braid::coll
