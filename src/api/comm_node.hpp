// A communicator's node-local resources: its node map (in communicator ranks), the topology
// the selection sees, and, where ranks of the communicator share a node, a region of the node's
// shared-memory pool (node/node_pool.hpp) with a NodeChannel over it. Each communicator has a
// region of its own because the channel's windows and turns are sequenced by that
// communicator's calls; all of them live in the one segment braid_init set up on the node.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "intranode/node_channel.hpp"
#include "node/node_discovery.hpp"
#include "node/node_map.hpp"
#include "node/node_pool.hpp"
#include "selection/selection.hpp"

namespace braid::detail {

struct CommNode {
  NodeMap map;
  coll::Topology topology;
  // Declared in the order they are set up, so they go in reverse: channel, region (the pool
  // keeps this process's mapping of it).
  RegionLease region;                          // none when this rank's node has one member
  std::unique_ptr<coll::NodeChannel> channel;  // null when the node-local path is off
};

// Collective over the communicator whose members (world ranks, in communicator order) are
// `members`, this rank being member `me`, with context id `context` (0: the world). `agree(ok)`
// must return whether every member passed true; it is called exactly twice on every path (a
// bootstrap allgather for the world, a collective of the parent for a child, so that the
// child's own calls start at #0).
// The world's leader on each node creates the node's pool (`pool` null, `world_map` null); a
// child takes a region of `pool`, the world's (null when the world has none on this node), whose
// ranks `world_map` numbers. Never fails for want of shared memory: if any member cannot set its
// region up, every member goes without (and the reason is logged). `numa_node` is where this
// rank's part of the region goes (-1: not bound).
std::unique_ptr<CommNode> setup_comm_node(const NodeDiscovery &nodes,
                                          std::shared_ptr<NodePool> pool, const NodeMap *world_map,
                                          const std::vector<int> &members, int me, uint32_t context,
                                          const std::string &job_key, int numa_node,
                                          const std::function<bool(bool)> &agree);

}  // namespace braid::detail
