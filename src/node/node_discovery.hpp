// At braid_init: which ranks share a node. Every rank tells every other its host identity,
// pid, CPU affinity mask and whether it wants the node-local path (one bootstrap allgather).
// Communicators derive their node maps from this (a child's map is the parent's restricted to its
// members) and set up their own shared memory (api/comm_node.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/env_config.hpp"
#include "node/cma_mode.hpp"
#include "node/node_map.hpp"

namespace braid::detail {

class Bootstrap;

struct NodeDiscovery {
  std::vector<std::string> host_ids;  // by world rank
  std::vector<int> pids;              // by world rank
  bool intranode = true;              // no rank set BRAID_INTRANODE=off
  CmaMode cma = CmaMode::automatic;   // this rank's BRAID_CMA (a vote per call: no agreement)
  // BRAID_CACHE_BYTES: the last-level cache size that decides which copies stream past the
  // cache (NodeChannel::streams), in place of hwloc's; 0 streams none. Unset: hwloc's.
  std::optional<size_t> cache_bytes;
  // More ranks compete for this rank's CPUs than those CPUs number: the ranks on this host
  // whose affinity masks overlap this rank's outnumber the CPUs of those masks together. A
  // rank bound to a core of its own (braidrun, mpirun --bind-to core, srun --cpu-bind) is not
  // oversubscribed although its mask holds one CPU; unbound ranks on a host with fewer cores
  // than ranks are.
  bool oversubscribed = false;
  // The CPU this rank returns to after a sleep (home_cpu.hpp), -1 for none: see home_cpu_of.
  // BRAID_HOME_CPU=off leaves placement to the kernel.
  int home_cpu = -1;
  // The node map of the ranks `members` (world ranks, in communicator order) for the member
  // at index `me`.
  NodeMap map_of(const std::vector<int> &members, int me) const;
};

// One rank's machine (a hash of its real host identity: fake nodes share one machine's CPUs)
// and CPU affinity mask (CPUs 0..1023), as node discovery exchanges them.
struct CpuClaim {
  uint64_t machine = 0;
  std::array<uint64_t, 16> cpus{};
};
// NodeDiscovery::oversubscribed for rank `me` of `ranks`.
bool oversubscribed(const std::vector<CpuClaim> &ranks, int me);

// NodeDiscovery::home_cpu for rank `me` of `ranks`: when more ranks on its machine have exactly
// its affinity mask than the mask has CPUs (and it has two or more), the mask's CPUs dealt out
// to those ranks in rank order (k-th such rank: the (k mod CPUs)-th CPU of the mask); else -1
// (a rank bound to one CPU, masks that differ, enough CPUs for everyone).
int home_cpu_of(const std::vector<CpuClaim> &ranks, int me);

// Collective over the bootstrap: every rank calls it. Throws Failure for a bad
// BRAID_INTRANODE value or a bootstrap failure.
NodeDiscovery discover_nodes(Bootstrap &bootstrap, const EnvConfig &config, const EnvLookup &env);

// Whether every rank says yes (one bootstrap allgather).
bool all_agree(Bootstrap &bootstrap, bool mine);

}  // namespace braid::detail
