#include "algorithm_name.hpp"

#include <cctype>
#include <cstdlib>

#include "text.hpp"
#ifdef BRAID_BENCH_HAVE_SELECTION
#include "intranode/algorithms.hpp"
#endif

#ifdef BRAID_BENCH_HAVE_SELECTION
#include <algorithm>
#include <string>
#include <vector>

#include "node/node_map.hpp"
#include "selection/selection.hpp"
#include "tuning/machine_profile.hpp"
#endif

namespace braid_bench {

std::string override_variable(Collective c) {
  // libbraid reads BRAID_<KIND>_ALGO with the kind's name in capitals (coll_kind.cpp), so a
  // new kind needs nothing here.
  std::string var = "BRAID_";
  for (const char *p = name(c); *p; ++p)
    var += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
  return var + "_ALGO";
}

namespace {

std::string forced_algorithm(Collective c) {
  const std::string var = override_variable(c);
  const char *value = var.empty() ? nullptr : std::getenv(var.c_str());
  return value ? value : "";
}

#ifdef BRAID_BENCH_HAVE_SELECTION
braid::coll::CollKind kind_of(Collective c) {
  // The two enumerations list the kinds in the same order (checked below).
  return static_cast<braid::coll::CollKind>(static_cast<int>(c));
}
static_assert(static_cast<int>(Collective::scatter) ==
              static_cast<int>(braid::coll::CollKind::scatter));
static_assert(static_cast<int>(Collective::reduce_scatter) ==
              static_cast<int>(braid::coll::CollKind::reduce_scatter));

// Where libbraid will find the ranks, from what the launcher tells each rank: BRAID_HOST_ID
// (the test override, one entry per rank in turn) or BRAID_LOCAL_SIZE ranks per node, and
// whether BRAID_INTRANODE leaves the node-local path on. libbraid itself compares host
// identities at braid_init; braidrun places BRAID_LOCAL_SIZE ranks on each host.
braid::coll::Topology topology(int ranks) {
  braid::coll::Topology t = braid::coll::Topology::flat(ranks);
  const char *off = std::getenv("BRAID_INTRANODE");
  t.intranode = off == nullptr || std::string(off) != "off";
  const char *ids = std::getenv("BRAID_HOST_ID");
  if (ids != nullptr && *ids != '\0') {
    std::vector<std::string> names{""};
    for (const char *p = ids; *p; ++p) {
      if (*p == ',')
        names.emplace_back();
      else
        names.back() += *p;
    }
    std::vector<std::string> per_rank;
    for (int r = 0; r < ranks; ++r) per_rank.push_back(names[r % names.size()]);
    const braid::detail::NodeMap m = braid::detail::make_node_map(per_rank, 0);
    t.nodes = m.nodes;
    t.max_local = m.max_local;
    return t;
  }
  const char *local = std::getenv("BRAID_LOCAL_SIZE");
  const int per_node = local ? std::clamp(std::atoi(local), 1, ranks) : ranks;
  t.nodes = (ranks + per_node - 1) / per_node;
  t.max_local = per_node;
  return t;
}

braid::coll::SelectionTable selection() {
  auto table = braid::coll::SelectionTable::defaults();
  const char *mode = std::getenv("BRAID_SELECTION");
  if (mode != nullptr && std::string(mode) == "rules") return table;
  std::string why;
  if (auto profile = braid::detail::profile_from_environment(&why))
    table.set_model(braid::coll::CostInputs::from_profile(*profile, "BRAID_TUNING_FILE"));
  else
    table.set_model(braid::coll::CostInputs::typical());
  return table;
}
#endif

}  // namespace

std::string braid_algorithm(Collective c, size_t bytes, size_t count, int ranks) {
  if (ranks <= 1) return "local";
  const std::string forced = forced_algorithm(c);
  if (!forced.empty()) return forced;
#ifdef BRAID_BENCH_HAVE_SELECTION
  // Exactly what libbraid's launch() asks: choose(kind, bytes, count, ranks). The overrides
  // are empty here (a forced name returned above): the cost model with the same figures
  // libbraid takes (this rank's BRAID_TUNING_FILE, as every rank's on one node), or the rule
  // table under BRAID_SELECTION=rules.
  static const braid::coll::SelectionTable table = selection();
  const braid::coll::Topology where = topology(ranks);
  const braid::coll::Choice choice = table.choose(kind_of(c), bytes, count, where);
  if (choice.algorithm->takes_inner)
    return cat("auto(hierarchical+",
               table.choose_among_leaders(kind_of(c), bytes, count, where).algorithm->name, ")");
  return cat("auto(", choice.algorithm->name, ")");
#else
  (void)bytes;
  (void)count;
  return "auto";
#endif
}

bool braid_algorithm_exists(Collective c, const std::string &name, std::string *why) {
#ifdef BRAID_BENCH_HAVE_SELECTION
  if (braid::coll::find_algorithm(kind_of(c), name) != nullptr) return true;
  std::string valid;
  for (const braid::coll::Algorithm &a : braid::coll::all_algorithms()) {
    if (a.kind != kind_of(c)) continue;
    if (!valid.empty()) valid += ", ";
    valid += a.name;
  }
  if (why) *why = cat("not a braid ", braid_bench::name(c), " algorithm; valid: ", valid);
  return false;
#else
  (void)c;
  (void)name;
  (void)why;
  return true;
#endif
}

}  // namespace braid_bench
