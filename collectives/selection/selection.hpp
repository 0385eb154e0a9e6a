// The algorithm selection: by a cost model fed with the machine's measured figures
// (cost_model.hpp) when one is set, as libbraid does, else by the rule table: data, not nested
// ifs. A rule maps a byte range and a rank-count
// range of one collective to an algorithm and a pipeline segment size; the first matching rule
// wins. BRAID_<KIND>_ALGO (e.g. BRAID_ALLREDUCE_ALGO) forces one algorithm for every size, and
// `braid-info --explain` prints the table so no switch point is hidden.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/coll_args.hpp"
#include "selection/cost_model.hpp"

namespace braid::coll {

// Where the ranks are. Rules for the node-local paths match only the topologies they serve.
enum class Span {
  any,       // every topology (the flat algorithms)
  one_node,  // every rank on one node, the node-local path enabled
  nodes,     // several nodes, at least one with several ranks, the node-local path enabled
};

// An algorithm and its traits: what the selection and the engine need to know about it is
// said here, never inferred from which function it is.
struct Algorithm {
  const char *name;
  CollKind kind;
  AlgorithmFn fn;
  const char *summary;
  Span needs = Span::any;    // the topology it can run on (any: the flat algorithms)
  bool takes_inner = false;  // runs a flat algorithm among node leaders (CollArgs::inner)
  // What braid-info --explain adds for a call of `bytes` (which path inside it), or null.
  const char *(*note)(size_t bytes) = nullptr;
};

struct Topology {
  int ranks = 1;
  int nodes = 1;           // nodes the ranks are on
  int max_local = 1;       // ranks on the most populated node
  bool intranode = false;  // the node-local shared-memory path is available
  // One rank per node as far as braid knows: the flat algorithms everywhere.
  static Topology flat(int ranks) { return {ranks, ranks, 1, false}; }
  Span span() const;
};

struct Rule {
  CollKind kind;
  size_t min_bytes;  // inclusive
  size_t max_bytes;  // exclusive; SIZE_MAX for "and up"
  int min_ranks;     // inclusive
  int max_ranks;     // inclusive
  const char *algorithm;
  size_t segment_bytes;
  Span span = Span::any;
};

struct Choice {
  const Algorithm *algorithm = nullptr;
  size_t segment_bytes = 0;
  int rule = -1;            // index into rules() when a rule chose, else -1
  const char *reason = "";  // why, when no rule chose (the model, an override, a special case)
  double predicted_us = 0;  // the model's prediction when the model chose
  const char *path = "";    // the node protocol the model expects ("windows", ...), or ""
};
// "rule 3" or the reason; for logs and braid-info.
std::string describe(const Choice &choice);

const std::vector<Algorithm> &all_algorithms();
const Algorithm *find_algorithm(CollKind kind, std::string_view name);

class SelectionTable {
 public:
  // The built-in rules (docs/algorithms.md explains the switch points).
  static SelectionTable defaults();
  // Applies BRAID_<KIND>_ALGO (kind_info(kind).override_var); an unknown name throws Failure
  // naming the valid ones. Empty strings leave the rules alone.
  void set_override(CollKind kind, std::string_view name);
  // set_override for every kind from the process environment.
  void set_overrides_from_environment();
  // The algorithm BRAID_<KIND>_ALGO forces, or nullptr.
  const Algorithm *override_of(CollKind kind) const {
    return overrides_[static_cast<size_t>(kind)];
  }
  // From now on the cost model chooses (the rules stay for BRAID_SELECTION=rules and for the
  // segment sizes); overrides still win. Every rank must set the same inputs.
  void set_model(CostInputs inputs);
  const CostModel *model() const { return model_.get(); }

  Choice choose(CollKind kind, size_t bytes, size_t count, int ranks) const {
    return choose(kind, bytes, count, Topology::flat(ranks));
  }
  Choice choose(CollKind kind, size_t bytes, size_t count, const Topology &where) const;
  // For a hierarchical choice: the flat algorithm the node leaders run among themselves.
  Choice choose_among_leaders(CollKind kind, size_t bytes, size_t count,
                              const Topology &where) const;
  // Human-readable table: the rules, the overrides, and the choice per size for `ranks`.
  std::string explain(int ranks) const { return explain(Topology::flat(ranks)); }
  std::string explain(const Topology &where) const;

  const std::vector<Rule> &rules() const { return rules_; }

 private:
  Choice by_model(CollKind kind, size_t bytes, size_t count, const Topology &where) const;
  size_t rule_segment(const Algorithm &a) const;
  std::vector<Rule> rules_;
  std::array<const Algorithm *, kKindCount> overrides_{};
  std::shared_ptr<const CostModel> model_;  // shared by copies (choose_among_leaders)
};

std::string format_bytes(size_t bytes);

}  // namespace braid::coll
