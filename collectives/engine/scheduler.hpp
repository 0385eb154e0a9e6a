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
  // `numa_node`: the rank's node, where scratch buffers go (-1: not bound).
  Scheduler(detail::Transport &transport, int rank, int size, double timeout_s, bool oversubscribed,
            int numa_node = -1);

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
  const ScratchPool &scratch() const { return scratch_; }

 private:
  detail::Transport &transport_;
  int rank_;
  int size_;
  double timeout_s_;
  unsigned seq_bits_;
  bool oversubscribed_;
  ScratchPool scratch_;  // declared before active_: outlives the collectives using it
  std::vector<std::shared_ptr<Collective>> active_;
};

}  // namespace braid::coll
