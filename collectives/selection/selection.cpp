#include "selection/selection.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "allgather/algorithms.hpp"
#include "allreduce/algorithms.hpp"
#include "alltoall/algorithms.hpp"
#include "barrier/barrier.hpp"
#include "broadcast/algorithms.hpp"
#include "error.hpp"
#include "gather/algorithms.hpp"
#include "intranode/algorithms.hpp"
#include "intranode/hierarchical_algorithms.hpp"
#include "intranode/shm_algorithms.hpp"
#include "reduce/algorithms.hpp"
#include "reduce_scatter/algorithms.hpp"
#include "scatter/algorithms.hpp"

namespace braid::coll {
namespace {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * KiB;
constexpr size_t kAny = SIZE_MAX;
constexpr int kAnyRanks = 1 << 30;

}  // namespace

const std::vector<Algorithm> &all_algorithms() {
  static const std::vector<Algorithm> algorithms = {
      {"recursive_doubling", CollKind::allreduce, allreduce_recursive_doubling,
       "log2(n) rounds exchanging the whole vector; lowest latency"},
      {"rabenseifner", CollKind::allreduce, allreduce_rabenseifner,
       "recursive-halving reduce-scatter + recursive-doubling allgather"},
      {"ring", CollKind::allreduce, allreduce_ring,
       "segmented, pipelined ring reduce-scatter + allgather; bandwidth-optimal"},
      {"binomial", CollKind::broadcast, broadcast_binomial, "binomial tree from the root"},
      {"scatter_allgather", CollKind::broadcast, broadcast_scatter_allgather,
       "binomial scatter + ring allgather; bandwidth-optimal on 3+ ranks"},
      {"shm", CollKind::allreduce, allreduce_shm,
       "node-local shared memory: per-rank slots (small) or pipelined reduce-scatter + gather",
       Span::one_node, false, allreduce_shm_note},
      {"hierarchical", CollKind::allreduce, allreduce_hierarchical,
       "node-local reduce, allreduce among node leaders, node-local broadcast", Span::nodes, true},
      {"shm", CollKind::broadcast, broadcast_shm,
       "node-local shared memory: the root writes each window once, the others copy it out",
       Span::one_node, false, broadcast_shm_note},
      {"hierarchical", CollKind::broadcast, broadcast_hierarchical,
       "to the root's node leader, broadcast among node leaders, node-local broadcast", Span::nodes,
       true},
      {"dissemination", CollKind::barrier, barrier_dissemination,
       "ceil(log2(n)) rounds of zero-byte messages"},
      {"shm", CollKind::barrier, barrier_shm,
       "node-local shared memory: every rank publishes its entry on its own cache line",
       Span::one_node},
      {"binomial", CollKind::reduce, reduce_binomial,
       "binomial tree towards the root; lowest latency"},
      {"scatter_gather", CollKind::reduce, reduce_scatter_gather,
       "ring reduce-scatter, then every block to the root; bandwidth-optimal"},
      {"recursive_doubling", CollKind::allgather, allgather_recursive_doubling,
       "log2(n) exchanges of everything gathered so far (Bruck when n is not a power of two)"},
      {"bruck", CollKind::allgather, allgather_bruck,
       "ceil(log2(n)) steps for any n, rotated blocks put in order at the end"},
      {"ring", CollKind::allgather, allgather_ring, "n-1 steps around the ring; bandwidth-optimal"},
      {"ring", CollKind::allgatherv, allgatherv_ring,
       "n-1 steps around the ring, blocks of any size"},
      {"recursive_halving", CollKind::reduce_scatter, reduce_scatter_recursive_halving,
       "log2(n) halvings (the ring when n is not a power of two)"},
      {"ring", CollKind::reduce_scatter, reduce_scatter_ring,
       "each block once around the ring; bandwidth-optimal"},
      {"pairwise", CollKind::alltoall, alltoall_pairwise,
       "n-1 steps, one peer per step (rank + s, rank - s)"},
      {"bruck", CollKind::alltoall, alltoall_bruck,
       "ceil(log2(n)) steps moving half the blocks each; lowest latency for tiny blocks"},
      {"pairwise", CollKind::alltoallv, alltoallv_pairwise,
       "n-1 steps, one peer per step, blocks of any size"},
      {"binomial", CollKind::gather, gather_binomial,
       "subtrees' blocks up a binomial tree; log2(n) steps"},
      {"linear", CollKind::gather, gather_linear, "every rank sends its block to the root"},
      {"binomial", CollKind::scatter, scatter_binomial,
       "subtrees' blocks down a binomial tree; log2(n) steps"},
      {"linear", CollKind::scatter, scatter_linear, "the root sends every rank its block"},
      {"shm", CollKind::reduce, reduce_shm,
       "node-local shared memory: vectors in the call records (small) or reduced by windows",
       Span::one_node},
      {"shm", CollKind::allgather, allgather_shm,
       "node-local shared memory: blocks in the call records (small) or deposited by windows",
       Span::one_node},
      {"shm", CollKind::allgatherv, allgatherv_shm,
       "node-local shared memory: blocks in the call records (small) or deposited by windows",
       Span::one_node},
      {"shm", CollKind::reduce_scatter, reduce_scatter_shm,
       "node-local shared memory: each rank reduces its block's pieces from every buffer",
       Span::one_node},
      {"shm", CollKind::alltoall, alltoall_shm,
       "node-local shared memory: every rank's pieces for every other, window by window",
       Span::one_node},
      {"shm", CollKind::alltoallv, alltoallv_shm,
       "node-local shared memory: every rank's pieces for every other, window by window",
       Span::one_node},
      {"shm", CollKind::gather, gather_shm,
       "node-local shared memory: every rank deposits its block, the root copies them out",
       Span::one_node},
      {"shm", CollKind::scatter, scatter_shm,
       "node-local shared memory: the root deposits every rank's piece, each copies its own",
       Span::one_node},
      {"hierarchical", CollKind::reduce, reduce_hierarchical,
       "node-local reduce to one rank per node (the root on its node), reduce among them",
       Span::nodes, true},
      {"hierarchical", CollKind::allgather, allgather_hierarchical,
       "node-local gather to the leaders, ring allgatherv of the nodes' packs among them, "
       "node-local broadcast",
       Span::nodes},
      {"hierarchical", CollKind::barrier, barrier_hierarchical,
       "node-local meeting, dissemination among the node leaders, node-local release", Span::nodes},
  };
  return algorithms;
}

const Algorithm *find_algorithm(CollKind kind, std::string_view name) {
  for (const Algorithm &a : all_algorithms())
    if (a.kind == kind && name == a.name) return &a;
  return nullptr;
}

SelectionTable SelectionTable::defaults() {
  SelectionTable t;
  // Switch points measured with braid-bench over UCX on one node (docs/algorithms.md).
  t.rules_ = {
      {CollKind::allreduce, 0, 16 * KiB, 1, kAnyRanks, "recursive_doubling", 0},
      {CollKind::allreduce, 16 * KiB, 512 * KiB, 1, kAnyRanks, "rabenseifner", 0},
      {CollKind::allreduce, 512 * KiB, kAny, 1, kAnyRanks, "ring", 1 * MiB},
      {CollKind::broadcast, 0, 256 * KiB, 1, kAnyRanks, "binomial", 0},
      {CollKind::broadcast, 256 * KiB, kAny, 1, 2, "binomial", 0},
      {CollKind::broadcast, 256 * KiB, kAny, 3, kAnyRanks, "scatter_allgather", 0},
      {CollKind::barrier, 0, kAny, 1, kAnyRanks, "dissemination", 0},
      // Ranks sharing a node: shared memory (docs/intranode.md). Rules for a specific layout
      // are tried before the others, wherever they stand in the table.
      {CollKind::allreduce, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      {CollKind::broadcast, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      {CollKind::allreduce, 0, kAny, 2, kAnyRanks, "hierarchical", 0, Span::nodes},
      {CollKind::broadcast, 0, kAny, 2, kAnyRanks, "hierarchical", 0, Span::nodes},
      {CollKind::barrier, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      // The other kinds: bytes are the vector (reduce) or one rank's block (the others).
      {CollKind::reduce, 0, 256 * KiB, 1, kAnyRanks, "binomial", 0},
      {CollKind::reduce, 256 * KiB, kAny, 1, kAnyRanks, "scatter_gather", 0},
      {CollKind::allgather, 0, 8 * KiB, 1, kAnyRanks, "recursive_doubling", 0},
      {CollKind::allgather, 8 * KiB, kAny, 1, kAnyRanks, "ring", 0},
      {CollKind::allgatherv, 0, kAny, 1, kAnyRanks, "ring", 0},
      {CollKind::reduce_scatter, 0, 64 * KiB, 1, kAnyRanks, "recursive_halving", 0},
      {CollKind::reduce_scatter, 64 * KiB, kAny, 1, kAnyRanks, "ring", 0},
      {CollKind::alltoall, 0, 512, 8, kAnyRanks, "bruck", 0},
      {CollKind::alltoall, 0, kAny, 1, kAnyRanks, "pairwise", 0},
      {CollKind::alltoallv, 0, kAny, 1, kAnyRanks, "pairwise", 0},
      {CollKind::gather, 0, 64 * KiB, 1, kAnyRanks, "binomial", 0},
      {CollKind::gather, 64 * KiB, kAny, 1, kAnyRanks, "linear", 0},
      {CollKind::scatter, 0, 64 * KiB, 1, kAnyRanks, "binomial", 0},
      {CollKind::scatter, 64 * KiB, kAny, 1, kAnyRanks, "linear", 0},
      // Every rank on one node: shared memory for the whole set.
      {CollKind::reduce, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      {CollKind::allgather, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      {CollKind::allgatherv, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      {CollKind::reduce_scatter, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      {CollKind::alltoall, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      {CollKind::alltoallv, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      {CollKind::gather, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      {CollKind::scatter, 0, kAny, 2, kAnyRanks, "shm", 0, Span::one_node},
      // Ranks sharing nodes across several: one rank per node on the network.
      {CollKind::reduce, 0, kAny, 2, kAnyRanks, "hierarchical", 0, Span::nodes},
      {CollKind::allgather, 0, kAny, 2, kAnyRanks, "hierarchical", 0, Span::nodes},
      {CollKind::barrier, 0, kAny, 2, kAnyRanks, "hierarchical", 0, Span::nodes},
  };
  return t;
}

void SelectionTable::set_override(CollKind kind, std::string_view name) {
  if (name.empty()) return;
  const Algorithm *a = find_algorithm(kind, name);
  if (a == nullptr) {
    std::string valid;
    for (const Algorithm &x : all_algorithms())
      if (x.kind == kind) valid += detail::cat(valid.empty() ? "" : ", ", x.name);
    detail::fail(BRAID_ERR_INVALID_ARGUMENT, kind_info(kind).override_var, "='", name,
                 "' is not a ", kind_name(kind), " algorithm; valid: ", valid);
  }
  overrides_[static_cast<size_t>(kind)] = a;
}

void SelectionTable::set_overrides_from_environment() {
  for (size_t k = 0; k < kKindCount; ++k) {
    const auto kind = static_cast<CollKind>(k);
    const char *value = std::getenv(kind_info(kind).override_var);
    set_override(kind, value != nullptr ? value : "");
  }
}

Span Topology::span() const {
  if (!intranode || max_local < 2) return Span::any;
  return nodes == 1 ? Span::one_node : Span::nodes;
}

Choice SelectionTable::choose_among_leaders(CollKind kind, size_t bytes, size_t count,
                                            const Topology &where) const {
  Topology leaders = Topology::flat(where.nodes);
  SelectionTable flat = *this;
  // A forced node-aware algorithm applies to the whole call, not to the leaders' part.
  for (const Algorithm *&forced : flat.overrides_)
    if (forced != nullptr && forced->needs != Span::any) forced = nullptr;
  return flat.choose(kind, bytes, count, leaders);
}

void SelectionTable::set_model(CostInputs inputs) {
  model_ = std::make_shared<const CostModel>(std::move(inputs));
}

size_t SelectionTable::rule_segment(const Algorithm &a) const {
  for (const Rule &r : rules_)
    if (r.kind == a.kind && a.name == std::string_view(r.algorithm) && r.segment_bytes != 0)
      return r.segment_bytes;
  return 0;
}

Choice SelectionTable::by_model(CollKind kind, size_t bytes, size_t count,
                                const Topology &where) const {
  // Where ranks share a node, the node-aware algorithm serves the call whenever the kind has
  // one: inside it the node path measures its own copies at run time (single copy or the
  // windows, CopyChooser, seeded by this model), which follows a machine that changes by the
  // minute better than any profile; a flat algorithm there moves the same bytes over the same
  // core-to-core link with a transport's handshakes on top. The model chooses among the flat
  // algorithms everywhere else (and among the node leaders), and predicts the node path's
  // protocol.
  // Called whenever a call's kind or size differs from the last one's, so a node layout costs
  // only its node-aware algorithm's prediction, not every candidate's.
  Prediction best;
  const Span span = where.span();
  if (span != Span::any)
    for (const Algorithm &a : all_algorithms())
      if (a.kind == kind && a.needs == span) {
        best = model_->predict_one(a, bytes, where);
        break;
      }
  if (best.algorithm == nullptr)
    for (const Algorithm &a : all_algorithms()) {
      if (a.kind != kind || a.needs != Span::any) continue;
      const Prediction p = model_->predict_one(a, bytes, where);
      if (p.algorithm != nullptr && (best.algorithm == nullptr || p.us < best.us)) best = p;
    }
  if (best.algorithm == nullptr)
    detail::fail(BRAID_ERR_INTERNAL, "the cost model has no ", kind_name(kind), " algorithm for ",
                 where.ranks, " ranks");
  // With fewer elements than ranks the block algorithms would move empty blocks around.
  const char *few = kind_info(kind).few_elements_algorithm;
  if (best.algorithm->needs == Span::any && few != nullptr &&
      count < static_cast<size_t>(where.ranks))
    return {find_algorithm(kind, few), 0, -1, "fewer elements than ranks"};
  // A node-aware algorithm is the node layout's choice whatever a flat one is predicted to
  // cost (above); the reason says so, so that --explain does not read as the model's pick.
  const char *why = best.algorithm->needs == Span::any ? "cost model" : "node layout, cost model";
  return {best.algorithm, rule_segment(*best.algorithm), -1, why, best.us, best.path};
}

Choice SelectionTable::choose(CollKind kind, size_t bytes, size_t count,
                              const Topology &where) const {
  const int ranks = where.ranks;
  const Span span = where.span();
  const KindInfo &info = kind_info(kind);
  if (const Algorithm *forced = overrides_[static_cast<size_t>(kind)]) {
    const bool one_node = forced->needs == Span::one_node;
    if ((one_node && span != Span::one_node) || (forced->needs == Span::nodes && span == Span::any))
      detail::fail(BRAID_ERR_INVALID_ARGUMENT, "forced algorithm ", forced->name, " needs ",
                   one_node ? "every rank on one node" : "ranks sharing a node",
                   " and the node-local path enabled (", where.nodes, " nodes, up to ",
                   where.max_local, " ranks per node, BRAID_INTRANODE ",
                   where.intranode ? "on" : "off", ")");
    return {forced, 1 * MiB, -1, info.override_var};
  }
  if (model_) return by_model(kind, bytes, count, where);
  // Pass 0: the rules for this layout (span); pass 1: the rules for any layout.
  for (size_t k = 0; k < 2 * rules_.size(); ++k) {
    const size_t i = k % rules_.size();
    const Rule &r = rules_[i];
    const bool pass_any = k >= rules_.size();
    // max_bytes == SIZE_MAX means "and up", including SIZE_MAX itself.
    const bool below_max = r.max_bytes == kAny || bytes < r.max_bytes;
    if (r.kind != kind || bytes < r.min_bytes || !below_max || ranks < r.min_ranks ||
        ranks > r.max_ranks || (pass_any ? r.span != Span::any : r.span != span))
      continue;
    // With fewer elements than ranks the block algorithms would move empty blocks around.
    if (r.span == Span::any && info.few_elements_algorithm != nullptr &&
        count < static_cast<size_t>(ranks))
      return {find_algorithm(kind, info.few_elements_algorithm), 0, -1,
              "fewer elements than ranks"};
    return {find_algorithm(kind, r.algorithm), r.segment_bytes, static_cast<int>(i), ""};
  }
  detail::fail(BRAID_ERR_INTERNAL, "no selection rule for ", kind_name(kind), " of ", bytes,
               " bytes on ", ranks, " ranks");
}

std::string describe(const Choice &choice) {
  if (choice.rule >= 0) return detail::cat("rule ", choice.rule + 1);
  if (choice.predicted_us <= 0) return choice.reason;
  char text[96];
  std::snprintf(text, sizeof text, "%s, %.3g us%s%s", choice.reason, choice.predicted_us,
                *choice.path ? " by " : "", choice.path);
  return text;
}

std::string format_bytes(size_t bytes) {
  if (bytes == SIZE_MAX) return "inf";
  if (bytes >= MiB && bytes % MiB == 0) return detail::cat(bytes / MiB, " MiB");
  if (bytes >= KiB && bytes % KiB == 0) return detail::cat(bytes / KiB, " KiB");
  return detail::cat(bytes, " B");
}

std::string SelectionTable::explain(const Topology &where) const {
  const int ranks = where.ranks;
  std::ostringstream out;
  if (model_)
    out << "selection: the cost model, from " << model_->inputs().source
        << " (the rules below are used with BRAID_SELECTION=rules)\n";
  out << "selection rules (first match wins; rules for a node layout before the others):\n";
  for (size_t i = 0; i < rules_.size(); ++i) {
    const Rule &r = rules_[i];
    out << "  rule " << i + 1 << ": " << kind_name(r.kind) << " [" << format_bytes(r.min_bytes)
        << ", " << format_bytes(r.max_bytes) << ") on " << r.min_ranks << ".."
        << (r.max_ranks == kAnyRanks ? std::string("any") : std::to_string(r.max_ranks)) << " ranks"
        << (r.span == Span::one_node ? " all on one node"
            : r.span == Span::nodes  ? " sharing nodes across nodes"
                                     : "")
        << " -> " << r.algorithm;
    if (r.segment_bytes) out << " (segment " << format_bytes(r.segment_bytes) << ")";
    out << "\n";
  }
  for (size_t k = 0; k < kKindCount; ++k) {
    const KindInfo &info = kind_info(static_cast<CollKind>(k));
    if (info.few_elements_algorithm != nullptr)
      out << "  " << info.name << " with fewer elements than ranks -> "
          << info.few_elements_algorithm << "\n";
  }
  for (const Algorithm *forced : overrides_)
    if (forced != nullptr)
      out << "override: " << kind_info(forced->kind).override_var << "=" << forced->name << "\n";
  out << "choice per size on " << ranks << " ranks, " << where.nodes << " node"
      << (where.nodes == 1 ? "" : "s") << ", up to " << where.max_local
      << " ranks per node, node-local path " << (where.intranode ? "on" : "off")
      << " (float32 elements):\n";
  auto name = [&](CollKind kind, size_t bytes) {
    Choice c = choose(kind, bytes, bytes / 4, where);
    std::string s = detail::cat(c.algorithm->name, " (", describe(c), ")");
    if (c.algorithm->note != nullptr) s += c.algorithm->note(bytes);
    if (c.algorithm->takes_inner)
      s +=
          detail::cat(" with ", choose_among_leaders(kind, bytes, bytes / 4, where).algorithm->name,
                      " among leaders");
    return s;
  };
  for (size_t bytes = 8; bytes <= 64 * MiB; bytes *= 4) {
    out << "  " << format_bytes(bytes) << ": allreduce " << name(CollKind::allreduce, bytes)
        << ", broadcast " << name(CollKind::broadcast, bytes) << "\n";
    if (model_)
      for (CollKind kind : {CollKind::allreduce, CollKind::broadcast})
        out << "      predicted " << kind_name(kind) << ": "
            << format_predictions(model_->predict(kind, bytes, where)) << "\n";
  }
  out << "  barrier: " << name(CollKind::barrier, 0) << "\n";
  // The other kinds, by the bytes of one rank's block (reduce: of the vector).
  for (size_t k = static_cast<size_t>(CollKind::reduce); k < kKindCount; ++k) {
    const auto kind = static_cast<CollKind>(k);
    out << "  " << kind_name(kind) << ":";
    for (size_t bytes = 8; bytes <= 64 * MiB; bytes *= 16)
      out << " " << format_bytes(bytes) << " "
          << choose(kind, bytes, bytes / 4, where).algorithm->name
          << (bytes * 16 <= 64 * MiB ? "," : "");
    out << "\n";
  }
  return out.str();
}

}  // namespace braid::coll
