// At braid_init: which ranks share a node. Every rank tells every other its host identity,
// pid and whether it wants the node-local path (one bootstrap allgather). Communicators derive
// their node maps from this (a child's map is the parent's restricted to its members) and set
// up their own shared memory (api/comm_node.hpp).
#pragma once

#include <string>
#include <vector>

#include "config/env_config.hpp"
#include "node/node_map.hpp"

namespace braid::detail {

class Bootstrap;

struct NodeDiscovery {
  std::vector<std::string> host_ids;  // by world rank
  std::vector<int> pids;              // by world rank
  bool intranode = true;              // no rank set BRAID_INTRANODE=off
  // The node map of the ranks `members` (world ranks, in communicator order) for the member
  // at index `me`.
  NodeMap map_of(const std::vector<int> &members, int me) const;
};

// Collective over the bootstrap: every rank calls it. Throws Failure for a bad
// BRAID_INTRANODE value or a bootstrap failure.
NodeDiscovery discover_nodes(Bootstrap &bootstrap, const EnvConfig &config, const EnvLookup &env);

// Whether every rank says yes (one bootstrap allgather).
bool all_agree(Bootstrap &bootstrap, bool mine);

}  // namespace braid::detail
