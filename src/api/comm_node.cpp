#include "api/comm_node.hpp"

#include <algorithm>
#include <utility>

#include "engine/scheduler.hpp"
#include "error.hpp"
#include "log.hpp"
#include "memory/topology.hpp"
#include "node/shm_name.hpp"

namespace braid::detail {

static_assert(coll::Scheduler::kMaxContexts <= NodePool::kContexts,
              "the node pool keeps a mailbox per context id");

namespace {

// Whether the node's pool keeps freed regions warm (node_pool.hpp): not where a warm region
// could carry its last communicator's NUMA placement, nor where the topology is unknown or
// replayed from XML (not this machine's).
bool keep_regions_warm() {
  try {
    const Topology &topo = Topology::get();
    return topo.is_this_system() && topo.nodes().size() <= 1;
  } catch (const Failure &) {
    return false;
  }
}

// The machine's (first) last-level cache and how many of `local` ranks share one such cache:
// as many as the cache has cores (ranks are placed close together, a core each), or more where
// the ranks outnumber the cores (4 ranks on the 2-core VM share its one L3). {0, local} where
// the topology is unknown or replayed from XML (BRAID_CACHE_BYTES may still give the size).
std::pair<size_t, int> shared_cache(int local) {
  try {
    const Topology &topo = Topology::get();
    const Topology::Cache c = topo.last_level_cache();
    const int cores = topo.cores();
    if (!topo.is_this_system() || c.bytes == 0 || c.cores <= 0 || cores <= 0) return {0, local};
    const int caches = std::max(1, cores / c.cores);
    return {c.bytes, std::max((local + caches - 1) / caches, std::min(local, c.cores))};
  } catch (const Failure &) {
    return {0, local};
  }
}

}  // namespace

std::unique_ptr<CommNode> setup_comm_node(const NodeDiscovery &nodes,
                                          std::shared_ptr<NodePool> pool, const NodeMap *world_map,
                                          const std::vector<int> &members, int me, uint32_t context,
                                          const std::string &job_key, int numa_node,
                                          const std::function<bool(bool)> &agree) {
  auto res = std::make_unique<CommNode>();
  res->map = nodes.map_of(members, me);
  const NodeMap &m = res->map;
  const int size = static_cast<int>(members.size());
  res->topology = coll::Topology{size, m.nodes, m.max_local, false};
  const std::string name = context == 0 ? std::string("world") : cat("comm", context);
  if (!nodes.intranode || m.max_local < 2) {
    // agree() is called twice on every path: for a child it is a collective of the parent,
    // whose other members may be setting up a region.
    agree(true);
    agree(true);
    log(LogLevel::info, name, ": node-local path off: ",
        !nodes.intranode ? "BRAID_INTRANODE=off" : "no two ranks share a node");
    return res;
  }

  // The world's leader creates the node's pool and everyone's leader claims the communicator's
  // region in it, posting it to the others; once everyone knows whether that worked, the others
  // open the pool (the world) and collect the region; once everyone has, the leader unlinks the
  // pool's name.
  const bool world = world_map == nullptr;
  const bool shared = m.local_size() > 1;
  const size_t bytes = coll::NodeChannel::segment_bytes(m.local_size());
  // Mailboxes are numbered as the pool's ranks: the world's ranks on the node.
  const std::vector<int> &pool_index = world ? m.local_index : world_map->local_index;
  auto index_of = [&](int comm_rank) {
    return pool_index[static_cast<size_t>(members[static_cast<size_t>(comm_rank)])];
  };
  const int leader = members[static_cast<size_t>(m.local[0])];
  const std::string seg =
      segment_name(job_key, "node", leader, nodes.pids[static_cast<size_t>(leader)]);
  std::string why;
  bool ok = true;
  bool created = false;
  int region = -1;
  char *base = nullptr;  // this rank's mapping of the region
  bool warm = false;     // the region holds its last communicator's bytes
  if (shared && m.leader()) {
    if (world) {
      pool = NodePool::create(seg, m.local_size(), bytes, keep_regions_warm(), &why);
      ok = created = pool != nullptr;
    } else if (!pool) {
      ok = false;
      why = "the world has no node segment on this node";
    }
    if (ok) {
      region = pool->claim(static_cast<uint32_t>(m.local_size()), &warm);
      if (region < 0) {
        ok = false;
        why = cat("all ", NodePool::kRegions,
                  " regions of the node segment are held by other communicators");
      }
    }
    if (ok) ok = (base = pool->map(region, &why)) != nullptr;
    if (ok) {
      // Before the others can map it (the agreement below): see place_controls.
      coll::NodeChannel::place_controls(base, m.local_size(), numa_node, warm);
      for (int i = 1; i < m.local_size(); ++i)
        pool->post(index_of(m.local[static_cast<size_t>(i)]), context, region);
    }
  }
  struct Unlink {
    bool on;
    const std::string &name;
    ~Unlink() {
      if (on) unlink_segment(name);
    }
  } unlink{created, seg};
  const bool leaders_ok = agree(ok);
  if (region >= 0) {
    if (leaders_ok && ok) {
      res->region = RegionLease(pool, region);
    } else {  // claimed, but nobody else will use it
      base = nullptr;
      pool->unclaim(region);
    }
  }
  if (shared && !m.leader()) {
    if (world && leaders_ok) {
      pool = NodePool::open(seg, m.local_size(), bytes, &why);
      ok = pool != nullptr;
    }
    // Collected whatever the agreement said, so that the box is empty for the next
    // communicator with this context id.
    const int got = pool ? pool->collect(index_of(me), context) : -1;
    if (leaders_ok && ok) {
      if (got >= 0) {
        res->region = RegionLease(pool, got);
        ok = (base = pool->map(got, &why)) != nullptr;
      } else {
        ok = false;
        if (why.empty())
          why = pool ? "no region was posted for this communicator"
                     : "the world has no node segment on this node";
      }
    }
  }
  if (leaders_ok && ok) {
    res->channel = std::make_unique<coll::NodeChannel>(base, m);
    res->channel->set_cma_mode(nodes.cma);
    res->channel->set_oversubscribed(nodes.oversubscribed);
    const auto [cache_bytes, cache_ranks] = shared_cache(m.local_size());
    res->channel->set_shared_cache(nodes.cache_bytes.value_or(cache_bytes), cache_ranks);
    if (shared) res->channel->claim_own_part(numa_node);
  }
  const bool everyone_ok = agree(leaders_ok && ok);
  if (!ok) log(LogLevel::warn, name, ": node-local shared memory unavailable: ", why);
  if (!everyone_ok) {
    res->channel.reset();
    res->region = RegionLease();  // and the pool with it: the world's children go without too
    log(LogLevel::info, name, ": node-local path off: a rank could not set up shared memory");
    return res;
  }
  res->topology.intranode = true;
  if (shared) res->channel->touch_peer_parts();  // every rank has claimed its part (above)
  log(LogLevel::info, name, ": node-local path on: node ", m.node, " of ", m.nodes, ", local rank ",
      m.local_rank, " of ", m.local_size(),
      shared ? cat(", region ", res->region.region(), " of ", world ? seg : "the node's segment",
                   " (", bytes, " bytes)")
             : std::string());
  return res;
}

}  // namespace braid::detail
