// At communicator creation: find which ranks share a node (their host identities, exchanged
// with one bootstrap allgather) and, where several do, give each node a shared-memory segment
// and this rank a NodeChannel over it. BRAID_INTRANODE=off (on any rank) turns the path off.
#pragma once

#include <memory>

#include "config/env_config.hpp"
#include "intranode/node_channel.hpp"
#include "node/node_map.hpp"
#include "node/shm_segment.hpp"
#include "selection/selection.hpp"

namespace braid::detail {

class Bootstrap;

struct NodeResources {
  NodeMap map;
  coll::Topology topology;
  ShmSegment segment;                          // empty when this rank's node has one rank
  std::unique_ptr<coll::NodeChannel> channel;  // null when the node-local path is off
};

// Collective over the bootstrap: every rank calls it. Never fails for want of shared memory:
// if any rank cannot set the segment up, every rank goes without (and the reason is logged).
// Throws Failure for a bad BRAID_INTRANODE value or a bootstrap failure.
// `numa_node` is this rank's NUMA node (-1: not bound to one), where its part of the segment
// is placed.
std::unique_ptr<NodeResources> setup_node(Bootstrap &bootstrap, const EnvConfig &config,
                                          const EnvLookup &env, int numa_node);

}  // namespace braid::detail
