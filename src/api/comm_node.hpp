// A communicator's node-local resources: its node map (in communicator ranks), the topology
// the selection sees, and, where ranks of the communicator share a node, a shared-memory
// segment of its own with a NodeChannel over it. Each communicator has its own segment because
// the channel's windows and turns are sequenced by that communicator's calls.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "intranode/node_channel.hpp"
#include "node/node_discovery.hpp"
#include "node/node_map.hpp"
#include "node/shm_segment.hpp"
#include "selection/selection.hpp"

namespace braid::detail {

struct CommNode {
  NodeMap map;
  coll::Topology topology;
  ShmSegment segment;                          // empty when this rank's node has one member
  std::unique_ptr<coll::NodeChannel> channel;  // null when the node-local path is off
};

// Collective over the communicator whose members (world ranks, in communicator order) are
// `members`, this rank being member `me`. `agree(ok)` must return whether every member passed
// true; it is called exactly twice on every path (a bootstrap allgather for the world, a
// collective of the parent for a child, so that the child's own calls start at #0).
// Never fails for want of shared memory: if any member cannot set the segment up, every member
// goes without (and the reason is logged). `name` tells segments of different communicators
// apart; `numa_node` is where this rank's part of the segment goes (-1: not bound).
std::unique_ptr<CommNode> setup_comm_node(const NodeDiscovery &nodes,
                                          const std::vector<int> &members, int me,
                                          const std::string &job_key, const std::string &name,
                                          int numa_node, const std::function<bool(bool)> &agree);

}  // namespace braid::detail
