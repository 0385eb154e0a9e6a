// The cost model that chooses among the algorithms of a collective: a predicted time per
// candidate, from what the machine costs (a MachineProfile: the core-to-core handoff, window
// copy, memcpy, reduce and CMA rates, measured by braid-tune) and what the transport costs
// between nodes. A table of switch points tuned on one day is wrong on the next (the node path
// that won with a 60 ns core-to-core round trip loses 5x with a 330 ns one); a model fed by the
// day's measurements moves its switch points with the machine.
//
// The flat algorithms follow the usual latency-bandwidth-reduction model (Hockney; Thakur,
// Rabenseifner and Gropp, "Optimization of collective communication operations in MPICH",
// 2005): a message of m bytes costs alpha + m * beta, a reduction m * gamma. The node-local
// protocols are modelled from the profile: a window the reader copies out costs the measured
// producer->consumer rate plus two handoffs per window, a single copy one process_vm_readv
// call and the CMA rate, a call that fits in the call records a handoff and a memcpy.
// Predictions are for ranks that each have a core; they rank the candidates, they do not
// promise microseconds.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/coll_kind.hpp"
#include "tuning/machine_profile.hpp"

namespace braid::coll {

struct Algorithm;
struct Topology;

// What a point-to-point message of m bytes costs on one kind of link: latency_us + m / gbps,
// with messages from `rendezvous_bytes` up paying rendezvous_us more (a handshake or a CMA
// call) and moving at gbps, smaller ones at eager_gbps.
struct LinkCost {
  double latency_us = 0;
  double gbps = 0;
  double eager_gbps = 0;
  size_t rendezvous_bytes = 0;
  double rendezvous_us = 0;
  double time_us(size_t m) const { return fixed_us(m) + bytes_us(m); }
  double fixed_us(size_t m) const;  // what does not depend on the bytes
  double bytes_us(size_t m) const;  // what does
};

struct CostInputs {
  detail::MachineProfile node;  // this node's figures (every rank uses the same ones)
  LinkCost network;             // between nodes
  std::string source;           // where the figures come from, for braid-info and logs
  // A typical node when nothing was measured: this project's 2-core CI VM on a fast day
  // (docs/measurements/cost-model-2026-11-26.md), and a 100 Gb/s RDMA fabric between nodes.
  static CostInputs typical();
  static CostInputs from_profile(const detail::MachineProfile &p, std::string source);
};

// The transport between two ranks of one node when the node path is off or unused (UCX's
// shared memory for small messages, CMA for large ones): from the profile.
LinkCost local_link(const detail::MachineProfile &p);

struct Prediction {
  const Algorithm *algorithm = nullptr;
  double us = 0;
  const char *path = "";  // the node protocol the prediction assumes ("windows", ...), or ""
};

class CostModel {
 public:
  explicit CostModel(CostInputs inputs);
  // Every algorithm of `kind` that can run on `where`, with its predicted time for a call of
  // `bytes` (the vector for allreduce, broadcast and reduce, one rank's block for the others),
  // in all_algorithms() order.
  std::vector<Prediction> predict(CollKind kind, size_t bytes, const Topology &where) const;
  // One algorithm's prediction; algorithm null when it cannot run on `where`.
  Prediction predict_one(const Algorithm &a, size_t bytes, const Topology &where) const;
  // One reader copying `bytes` out of another rank's buffer on this node: whether a single
  // copy (CMA) is predicted to beat the segment's windows. Seeds the node path's CopyChooser,
  // which then measures.
  bool single_copy_wins(size_t bytes) const;
  const CostInputs &inputs() const { return in_; }
  // One reader copying `bytes` out of another rank through the segment's windows, and by
  // single copy in `calls` process_vm_readv calls.
  double windows_us(size_t bytes) const;
  double single_us(size_t bytes, size_t calls) const;

 private:
  double node_cost(CollKind kind, size_t m, int n, const char **path) const;
  double flat_cost(const Algorithm &a, size_t m, int n, const LinkCost &link) const;
  double flat_total(const Algorithm &a, size_t m, int n, const LinkCost &link) const;
  CostInputs in_;
  LinkCost local_;
};

// The predictions as a line for braid-info --explain: "binomial 3.1 us, shm[windows] 1.2 us".
std::string format_predictions(const std::vector<Prediction> &p);

}  // namespace braid::coll
