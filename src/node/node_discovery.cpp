#include "node/node_discovery.hpp"

#include <sched.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "error.hpp"
#include "node/fnv1a.hpp"
#include "node/host_identity.hpp"

namespace braid::detail {
namespace {

// What every rank tells the others about itself.
struct HostRecord {
  int32_t pid;
  uint8_t intranode;  // 1 unless BRAID_INTRANODE=off here
  char id[251];       // host identity, NUL-terminated (truncated if longer)
  CpuClaim cpus;
};

// This process's affinity mask (every CPU when it cannot be read).
std::array<uint64_t, 16> affinity_of_this_process() {
  std::array<uint64_t, 16> cpus{};
  cpu_set_t set;
  CPU_ZERO(&set);
  const bool known = sched_getaffinity(0, sizeof set, &set) == 0;
  for (size_t c = 0; c < cpus.size() * 64; ++c)
    if (!known || (c < CPU_SETSIZE && CPU_ISSET(c, &set))) cpus[c / 64] |= uint64_t{1} << (c % 64);
  return cpus;
}

}  // namespace

bool all_agree(Bootstrap &bootstrap, bool mine) {
  std::vector<uint8_t> all(static_cast<size_t>(bootstrap.size()));
  const uint8_t b = mine ? 1 : 0;
  bootstrap.allgather(&b, all.data(), 1);
  for (uint8_t v : all)
    if (v == 0) return false;
  return true;
}

NodeDiscovery discover_nodes(Bootstrap &bootstrap, const EnvConfig &config, const EnvLookup &env) {
  NodeDiscovery out;
  HostRecord mine{};
  mine.pid = static_cast<int32_t>(getpid());
  mine.intranode = switch_on(env, "BRAID_INTRANODE") ? 1 : 0;
  const std::optional<std::string> cma = env("BRAID_CMA");
  if (const std::optional<CmaMode> mode = cma_mode_from(cma))
    out.cma = *mode;
  else
    fail(BRAID_ERR_INVALID_ARGUMENT, "BRAID_CMA='", *cma, "' is not on, off or auto");
  const bool home_wanted = switch_on(env, "BRAID_HOME_CPU");
  if (const std::optional<std::string> cache = env("BRAID_CACHE_BYTES"); cache && !cache->empty())
    out.cache_bytes =
        static_cast<size_t>(parse_integer(*cache, "BRAID_CACHE_BYTES", 0, int64_t{1} << 50));
  const std::string id = local_host_identity(env, config.rank);
  std::strncpy(mine.id, id.c_str(), sizeof mine.id - 1);
  mine.cpus.cpus = affinity_of_this_process();
  // The CPUs are the machine's, whatever BRAID_HOST_ID says about nodes.
  mine.cpus.machine = fnv1a(local_host_identity(
      [&env](const char *name) -> std::optional<std::string> {
        if (std::strcmp(name, "BRAID_HOST_ID") == 0) return std::nullopt;
        return env(name);
      },
      config.rank));
  std::vector<HostRecord> all(static_cast<size_t>(config.size));
  bootstrap.allgather(&mine, all.data(), sizeof mine);
  std::vector<CpuClaim> claims;
  for (const HostRecord &r : all) claims.push_back(r.cpus);
  out.oversubscribed = oversubscribed(claims, config.rank);
  if (home_wanted) out.home_cpu = home_cpu_of(claims, config.rank);
  for (const HostRecord &r : all) {
    out.host_ids.emplace_back(r.id, strnlen(r.id, sizeof r.id));
    out.pids.push_back(r.pid);
    out.intranode = out.intranode && r.intranode != 0;
  }
  return out;
}

bool oversubscribed(const std::vector<CpuClaim> &ranks, int me) {
  const CpuClaim &mine = ranks[static_cast<size_t>(me)];
  std::array<uint64_t, 16> cpus{};  // the CPUs of the ranks that compete with this one
  int sharers = 0;
  for (const CpuClaim &r : ranks) {
    if (r.machine != mine.machine) continue;
    bool overlaps = false;
    for (size_t w = 0; w < cpus.size(); ++w) overlaps = overlaps || (r.cpus[w] & mine.cpus[w]) != 0;
    if (!overlaps) continue;
    ++sharers;
    for (size_t w = 0; w < cpus.size(); ++w) cpus[w] |= r.cpus[w];
  }
  int count = 0;
  for (uint64_t w : cpus) count += std::popcount(w);
  return sharers > count;
}

int home_cpu_of(const std::vector<CpuClaim> &ranks, int me) {
  const CpuClaim &mine = ranks[static_cast<size_t>(me)];
  int cpus = 0;
  for (uint64_t w : mine.cpus) cpus += std::popcount(w);
  int sharers = 0;
  int index = 0;  // this rank's place among the ranks with its mask
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].machine != mine.machine || ranks[r].cpus != mine.cpus) continue;
    if (static_cast<int>(r) < me) ++index;
    ++sharers;
  }
  if (cpus < 2 || sharers <= cpus) return -1;
  int k = index % cpus;
  for (size_t w = 0; w < mine.cpus.size(); ++w)
    for (int b = 0; b < 64; ++b)
      if ((mine.cpus[w] >> b & 1) != 0 && k-- == 0) return static_cast<int>(w * 64) + b;
  return -1;
}

NodeMap NodeDiscovery::map_of(const std::vector<int> &members, int me) const {
  std::vector<std::string> ids;
  ids.reserve(members.size());
  for (int w : members) ids.push_back(host_ids[static_cast<size_t>(w)]);
  return make_node_map(ids, me);
}

}  // namespace braid::detail
