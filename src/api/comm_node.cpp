#include "api/comm_node.hpp"

#include "log.hpp"

namespace braid::detail {

std::unique_ptr<CommNode> setup_comm_node(const NodeDiscovery &nodes,
                                          const std::vector<int> &members, int me,
                                          const std::string &job_key, const std::string &name,
                                          int numa_node, const std::function<bool(bool)> &agree) {
  auto res = std::make_unique<CommNode>();
  res->map = nodes.map_of(members, me);
  const NodeMap &m = res->map;
  const int size = static_cast<int>(members.size());
  res->topology = coll::Topology{size, m.nodes, m.max_local, false};
  if (!nodes.intranode || m.max_local < 2) {
    // agree() is called twice on every path: for a child it is a collective of the parent,
    // whose other members may be setting up a segment.
    agree(true);
    agree(true);
    log(LogLevel::info, name, ": node-local path off: ",
        !nodes.intranode ? "BRAID_INTRANODE=off" : "no two ranks share a node");
    return res;
  }

  // The leader creates the node's segment; once everyone knows whether that worked, the
  // others map it; once everyone has, the leader unlinks the name.
  const size_t bytes = coll::NodeChannel::segment_bytes(m.local_size());
  const bool shared = m.local_size() > 1;
  const int leader = members[static_cast<size_t>(m.local[0])];
  const std::string seg =
      segment_name(job_key, name.c_str(), leader, nodes.pids[static_cast<size_t>(leader)]);
  std::string why;
  bool ok = true;
  bool created = false;
  if (shared && m.leader()) ok = created = create_segment(seg, bytes, &res->segment, &why);
  // Before the others can open it (the agreement below): see place_controls.
  if (created) coll::NodeChannel::place_controls(res->segment.data(), m.local_size(), numa_node);
  struct Unlink {
    bool on;
    const std::string &name;
    ~Unlink() {
      if (on) unlink_segment(name);
    }
  } unlink{created, seg};
  const bool leaders_ok = agree(ok);
  if (leaders_ok && shared && !m.leader()) ok = open_segment(seg, bytes, &res->segment, &why);
  if (leaders_ok && ok) {
    res->channel = std::make_unique<coll::NodeChannel>(res->segment.data(), m);
    res->channel->set_cma_mode(nodes.cma);
    res->channel->set_oversubscribed(nodes.oversubscribed);
    if (shared) res->channel->claim_own_part(numa_node);
  }
  const bool everyone_ok = agree(leaders_ok && ok);
  if (!ok) log(LogLevel::warn, name, ": node-local shared memory unavailable: ", why);
  if (!everyone_ok) {
    res->channel.reset();
    res->segment = ShmSegment();
    log(LogLevel::info, name, ": node-local path off: a rank could not set up shared memory");
    return res;
  }
  res->topology.intranode = true;
  log(LogLevel::info, name, ": node-local path on: node ", m.node, " of ", m.nodes, ", local rank ",
      m.local_rank, " of ", m.local_size(), shared ? ", segment " : "", shared ? seg : "", " (",
      bytes, " bytes)");
  return res;
}

}  // namespace braid::detail
