#include "selection/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "intranode/direct.hpp"
#include "intranode/node_channel.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/single_copy.hpp"
#include "selection/selection.hpp"

namespace braid::coll {
namespace {

// Microseconds per byte at `gbps` (1 GB/s moves 1000 bytes per microsecond).
double per_byte(double gbps) {
  return 1.0 / (std::max(gbps, 0.01) * 1e3);
}

int ceil_log2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

bool power_of_two(int n) {
  return (n & (n - 1)) == 0;
}

// A node-local call publishes its record and polls its peers' (the call agreement), about one
// handoff each way on top of this much work.
constexpr double kNodeCallUs = 0.1;
// One process_vm_readv: the system call and pinning the pages it reads (measured: a 32 KiB
// single-copy broadcast takes 1.2 us more than 32 KiB at the CMA rate).
constexpr double kCmaCallUs = 1.0;
// A transport's own software cost per message between two ranks of one node (UCX: about
// 0.3 us for 8 bytes on top of the cache-line handoff).
constexpr double kLocalSoftwareUs = 0.3;
// The algorithms in two phases (a reduce-scatter or scatter, then an allgather or gather) set
// up block partitions and scratch before their first message. Measured, 4 KiB allreduce on 2
// ranks over UCX: ring 3.95 us, rabenseifner 3.91, recursive doubling 1.35.
constexpr double kTwoPhaseSetupUs = 2.0;
// UCX switches to rendezvous (CMA on one node) from about here.
constexpr size_t kLocalRendezvousBytes = size_t{8} << 10;

}  // namespace

double LinkCost::fixed_us(size_t m) const {
  // Ramped up to the rendezvous size rather than a step: below it the eager protocol pays an
  // extra copy through its bounce buffers that grows with m, and a step would flip the
  // choice between algorithms whose messages fall on either side of it back and forth.
  if (rendezvous_bytes == 0) return latency_us + rendezvous_us;
  const double ramp = std::min(1.0, static_cast<double>(m) / static_cast<double>(rendezvous_bytes));
  return latency_us + rendezvous_us * ramp;
}

double LinkCost::bytes_us(size_t m) const {
  // The same ramp as fixed_us: the eager rate for tiny messages, the rendezvous rate from
  // rendezvous_bytes, no step between.
  const double ramp =
      rendezvous_bytes == 0
          ? 1.0
          : std::min(1.0, static_cast<double>(m) / static_cast<double>(rendezvous_bytes));
  return static_cast<double>(m) * (ramp * per_byte(gbps) + (1.0 - ramp) * per_byte(eager_gbps));
}

CostInputs CostInputs::typical() {
  detail::MachineProfile p;
  p.handoff_rtt_ns = 75;
  p.memcpy_gbps = 49;
  p.memcpy_large_gbps = 13.5;
  p.window_copy_gbps = 25;  // braid-tune's in-cache window copy, 69-90 ns round trip
  p.reduce_gbps = 12.7;
  p.cma_gbps = 11.5;
  p.host = "typical";
  return from_profile(p, "built-in typical node (no BRAID_TUNING_FILE)");
}

CostInputs CostInputs::from_profile(const detail::MachineProfile &p, std::string source) {
  CostInputs in;
  in.node = p;
  // 100 Gb/s RDMA: about 3 us per message with the software on both ends, 10 GB/s.
  in.network = {3.0, 10.0, 10.0, 0, 0};
  in.source = std::move(source);
  return in;
}

LinkCost local_link(const detail::MachineProfile &p) {
  // A small message's payload and flag cross the core-to-core link once: half a round trip.
  // A large one is a rendezvous (a request there, the CMA read, a done message back) and its
  // bytes, written by the sender's core, cross the link at no more than the rate a reader
  // pulls lines another core wrote (the window copy figure) or CMA reads them.
  // A profile's CMA figure is 0 where the kernel refused CMA: the rendezvous then copies
  // through the transport's shared memory, at no more than the window rate, and does not crawl.
  const double rate =
      p.cma_gbps > 0 ? std::min(p.window_copy_gbps, p.cma_gbps) : p.window_copy_gbps;
  return {kLocalSoftwareUs + p.handoff_rtt_ns / 2e3, rate,
          std::min(p.window_copy_gbps, p.memcpy_gbps), kLocalRendezvousBytes,
          kCmaCallUs + kLocalSoftwareUs + p.handoff_rtt_ns / 1e3};
}

CostModel::CostModel(CostInputs inputs) : in_(std::move(inputs)), local_(local_link(in_.node)) {}

double CostModel::windows_us(size_t bytes) const {
  constexpr size_t kWindow = NodeChannel::kWindow;
  const double m = static_cast<double>(bytes);
  const double windows = std::ceil(m / static_cast<double>(kWindow));
  const double handoff = in_.node.handoff_rtt_ns / 1e3;  // a window's flag there and back
  // The writer fills the first window before the reader starts; then they overlap, and the
  // reader pulls every line across the link at the measured producer->consumer rate.
  return static_cast<double>(std::min(bytes, kWindow)) * per_byte(in_.node.memcpy_gbps) +
         m * per_byte(in_.node.window_copy_gbps) + windows * handoff;
}

double CostModel::single_us(size_t bytes, size_t calls) const {
  return static_cast<double>(calls) * kCmaCallUs +
         static_cast<double>(bytes) * per_byte(in_.node.cma_gbps) +
         in_.node.handoff_rtt_ns / 1e3;  // the offer and the done flag
}

bool CostModel::single_copy_wins(size_t bytes) const {
  return bytes >= kSingleCopyMinBytes && single_us(bytes, 1) < windows_us(bytes);
}

// The node-local protocols ("shm") of each kind, as the files in intranode/ run them: the call
// agreement, then what each rank copies, by the windows or (where the kind has it) single copy,
// or inside the call records when the call is small.
double CostModel::node_cost(CollKind kind, size_t bytes, int n, const char **path) const {
  const double m = static_cast<double>(bytes);
  const double others = n - 1;
  const double handoff = in_.node.handoff_rtt_ns / 1e3;
  const double agree = kNodeCallUs + handoff;
  const double copy = per_byte(in_.node.memcpy_gbps);
  const double reduce = per_byte(in_.node.reduce_gbps);
  auto pick = [&](double windows, double single, bool single_possible) {
    if (single_possible && single < windows) {
      *path = "single-copy";
      return agree + single;
    }
    *path = "windows";
    return agree + windows;
  };
  // What one rank copies out of the others, and in how many CMA calls.
  auto exchange = [&](size_t each, size_t calls, double extra) {
    const size_t all = each * calls;
    return pick(windows_us(all) + extra, single_us(all, calls), each >= kSingleCopyMinBytes);
  };
  if (kind == CollKind::barrier) {
    *path = "records";
    return agree;
  }
  if (bytes < kSingleCopyMinBytes && kind != CollKind::reduce_scatter) {
    // Small calls travel in the call records: every rank reads its peers' lines.
    *path = "records";
    const double reduces = kind == CollKind::allreduce || kind == CollKind::reduce;
    return agree + handoff + others * m * (copy + reduces * reduce);
  }
  const size_t share = bytes / static_cast<size_t>(n);
  switch (kind) {
    case CollKind::broadcast:
      return exchange(bytes, 1, 0);
    case CollKind::scatter:
      // The root writes every other rank's piece into the windows.
      return exchange(bytes, 1, (others - 1) * m * copy);
    case CollKind::gather:
    case CollKind::allgather:
    case CollKind::allgatherv:
    case CollKind::alltoall:
      return exchange(bytes, static_cast<size_t>(n - 1), 0);
    case CollKind::alltoallv:
      // `bytes` is the send buffer's span, n blocks. Each record says where its block for
      // every local rank starts (direct_alltoallv.cpp); past the records' room for that (341
      // local ranks) only the windows are left, which this does not model.
      return exchange(bytes / static_cast<size_t>(n), static_cast<size_t>(n - 1), 0);
    case CollKind::reduce:
      *path = "windows";
      return agree + m * copy + windows_us(bytes - share) + (m - m / n) * reduce +
             windows_us(bytes - share);
    case CollKind::reduce_scatter:
      *path = "windows";
      // Every rank reads its block's pieces from the others as they deposit them.
      return agree + windows_us(bytes * static_cast<size_t>(n - 1)) + others * m * reduce;
    case CollKind::allreduce: {
      if (bytes <= kSmallReduceBytes) {
        *path = "slots";
        return agree + handoff + others * m * (copy + reduce);
      }
      // Reduce-scatter of the shares, then every rank copies the others' reduced shares.
      const size_t rest = bytes - share;
      const double windows = m * copy + 2 * windows_us(rest) + (m - m / n) * reduce;
      // Single copy: read the others' pieces of my share in 128 KiB chunks, reduce, publish,
      // then read their reduced shares.
      const size_t chunks = std::max<size_t>(1, (share + (128u << 10) - 1) / (128u << 10));
      const double single = single_us(rest, chunks * static_cast<size_t>(n - 1)) +
                            (m - m / n) * reduce + single_us(rest, static_cast<size_t>(n - 1));
      return pick(windows, single, bytes >= kAllreduceSingleCopyMinBytes);
    }
    case CollKind::barrier:
      break;
  }
  *path = "windows";
  return agree + windows_us(bytes);
}

// The flat algorithms over the transport, each as its file runs it; m is the vector
// (allreduce, broadcast, reduce) or one rank's block (the others).
double CostModel::flat_cost(const Algorithm &a, size_t bytes, int n, const LinkCost &link) const {
  const std::string_view name = a.name;
  const double m = static_cast<double>(bytes);
  const int rounds = ceil_log2(n);
  const double l = rounds;
  const double others = n - 1;
  const size_t share = bytes / static_cast<size_t>(n);
  const double reduce = per_byte(in_.node.reduce_gbps);
  const double copy = per_byte(in_.node.memcpy_gbps);
  auto msg = [&](double b) { return link.time_us(static_cast<size_t>(std::max(b, 0.0))); };
  // Ranks beyond the largest power of two fold their vector into a partner first and get the
  // result back at the end (allreduce/fold.cpp).
  const double fold = power_of_two(n) ? 0 : 2 * msg(m) + m * reduce;
  const int pow2_rounds = power_of_two(n) ? rounds : rounds - 1;
  switch (a.kind) {
    case CollKind::allreduce:
      if (name == "recursive_doubling") return fold + pow2_rounds * (msg(m) + m * reduce);
      if (name == "rabenseifner") {
        // Halving: messages of m/2, m/4, ...; doubling back the same.
        double t = fold;
        for (int r = 1; r <= pow2_rounds; ++r) {
          const double piece = m / std::pow(2.0, r);
          t += 2 * msg(piece) + piece * reduce;
        }
        return t;
      }
      if (name == "ring") {
        // Segmented and pipelined: in the reduce-scatter a block's reduction overlaps the next
        // block's transfer, so a step costs the larger of the two; the allgather only moves.
        const double s = static_cast<double>(share);
        const double step = link.fixed_us(share) + std::max(s * reduce, link.bytes_us(share));
        return others * step + others * msg(s);
      }
      break;
    case CollKind::broadcast:
      if (name == "binomial") return l * msg(m);
      if (name == "scatter_allgather") {
        // Binomial scatter: the root's half, then a quarter, ...; then the ring allgather.
        double t = 0;
        for (int r = 1; r <= rounds; ++r) t += msg(m / std::pow(2.0, r));
        return t + others * msg(static_cast<double>(share));
      }
      break;
    case CollKind::barrier:
      return l * msg(0);
    case CollKind::reduce:
      if (name == "binomial") return l * (msg(m) + m * reduce);
      if (name == "scatter_gather")
        return others * (msg(static_cast<double>(share)) + static_cast<double>(share) * reduce) +
               others * msg(static_cast<double>(share));
      break;
    case CollKind::allgather:
    case CollKind::allgatherv:
      if (name == "ring") return others * msg(m);
      if (name == "recursive_doubling" || name == "bruck") {
        double t = 0;
        // Round r moves 2^r blocks, the last one what is left (n - 2^r when n is not a power
        // of two).
        for (int r = 0; r < rounds; ++r)
          t += msg(m * std::min(std::pow(2.0, r), n - std::pow(2.0, r)));
        // Bruck (any n for bruck, non-powers of two for recursive doubling) rotates at the end.
        const bool rotates = name == "bruck" || !power_of_two(n);
        return t + (rotates ? n * m * copy : 0);
      }
      break;
    case CollKind::reduce_scatter:
      if (name == "ring")
        return others * (link.fixed_us(bytes) + std::max(m * reduce, link.bytes_us(bytes)));
      if (name == "recursive_halving") {
        if (!power_of_two(n)) return others * (msg(m) + m * reduce);  // it runs the ring
        double t = 0;
        for (int r = 1; r <= rounds; ++r) {
          const double half = m * n / std::pow(2.0, r);
          t += msg(half) + half * reduce;
        }
        return t;
      }
      break;
    case CollKind::alltoall:
    case CollKind::alltoallv:
      if (name == "pairwise") return others * msg(m);
      if (name == "bruck") return l * msg(m * n / 2) + 2 * n * m * copy;
      break;
    case CollKind::gather:
    case CollKind::scatter:
      // Binomial: a rank forwards its subtree's blocks (half the ranks' at the root's first
      // step), copied through a staging buffer on the way.
      if (name == "binomial") {
        double t = 0;
        for (int r = 0; r < rounds; ++r)
          t += msg(m * std::min(std::pow(2.0, r), n - std::pow(2.0, r)));
        return t + others * m * copy;
      }
      // Linear: the root posts every message at once; their latencies overlap, their bytes
      // do not.
      if (name == "linear") return msg(m) + (others - 1) * (m * per_byte(link.gbps) + 0.1);
      break;
  }
  return -1;  // no formula: never chosen (cost_model_test checks every algorithm has one)
}

double CostModel::flat_total(const Algorithm &a, size_t bytes, int n, const LinkCost &link) const {
  const double t = flat_cost(a, bytes, n, link);
  if (t < 0) return t;
  const std::string_view name = a.name;
  const bool two_phase = name == "ring" || name == "rabenseifner" || name == "scatter_allgather" ||
                         name == "scatter_gather";
  return two_phase && a.kind != CollKind::allgather && a.kind != CollKind::allgatherv &&
                 a.kind != CollKind::reduce_scatter
             ? t + kTwoPhaseSetupUs
             : t;
}

Prediction CostModel::predict_one(const Algorithm &a, size_t bytes, const Topology &where) const {
  const Span span = where.span();
  const int n = std::max(where.ranks, 1);
  Prediction p{&a, 0, ""};
  if (a.needs == Span::any) {
    // The flat algorithms cross the network whenever ranks are on several nodes (the slowest
    // link bounds every step), the node's own transport when all are on one.
    p.us = flat_total(a, bytes, n, where.nodes > 1 ? in_.network : local_);
  } else if (a.needs != span) {
    return {};
  } else if (a.needs == Span::one_node) {
    p.us = node_cost(a.kind, bytes, n, &p.path);
  } else {
    // Hierarchical: the node-local part on the fullest node, the best flat algorithm among
    // the node leaders over the network, and (allreduce, broadcast, allgather) the node-local
    // part again.
    const CollKind kind = a.kind;
    const char *ignored = "";
    const int local = std::max(where.max_local, 1);
    const CollKind node_kind = kind == CollKind::allreduce   ? CollKind::reduce
                               : kind == CollKind::allgather ? CollKind::gather
                                                             : kind;
    double node = node_cost(node_kind, bytes, local, &ignored);
    if (kind == CollKind::allreduce || kind == CollKind::allgather)
      node += node_cost(CollKind::broadcast,
                        kind == CollKind::allgather ? bytes * static_cast<size_t>(n) : bytes, local,
                        &ignored);
    double leaders = 0;
    bool first = true;
    const CollKind leader_kind = kind == CollKind::allgather ? CollKind::allgatherv : kind;
    const size_t leader_bytes =
        kind == CollKind::allgather ? bytes * static_cast<size_t>(local) : bytes;
    for (const Algorithm &f : all_algorithms()) {
      if (f.kind != leader_kind || f.needs != Span::any) continue;
      const double t = flat_total(f, leader_bytes, where.nodes, in_.network);
      if (t < 0) continue;  // no formula: not a candidate
      if (first || t < leaders) leaders = t;
      first = false;
    }
    p.us = node + leaders;
  }
  if (p.us < 0) return {};  // no formula
  return p;
}

std::vector<Prediction> CostModel::predict(CollKind kind, size_t bytes,
                                           const Topology &where) const {
  std::vector<Prediction> out;
  for (const Algorithm &a : all_algorithms())
    if (a.kind == kind)
      if (Prediction p = predict_one(a, bytes, where); p.algorithm != nullptr) out.push_back(p);
  return out;
}

std::string format_predictions(const std::vector<Prediction> &predictions) {
  std::string out;
  char item[96];
  for (const Prediction &p : predictions) {
    if (*p.path)
      std::snprintf(item, sizeof item, "%s%s[%s] %.3g us", out.empty() ? "" : ", ",
                    p.algorithm->name, p.path, p.us);
    else
      std::snprintf(item, sizeof item, "%s%s %.3g us", out.empty() ? "" : ", ", p.algorithm->name,
                    p.us);
    out += item;
  }
  return out;
}

}  // namespace braid::coll
