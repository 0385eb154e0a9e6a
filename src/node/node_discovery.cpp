#include "node/node_discovery.hpp"

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "error.hpp"
#include "node/host_identity.hpp"

namespace braid::detail {
namespace {

// What every rank tells the others about itself.
struct HostRecord {
  int32_t pid;
  uint8_t intranode;  // 1 unless BRAID_INTRANODE=off here
  char id[251];       // host identity, NUL-terminated (truncated if longer)
};

bool intranode_wanted(const EnvLookup &env) {
  auto v = env("BRAID_INTRANODE");
  if (!v || v->empty() || *v == "on" || *v == "auto") return true;
  if (*v == "off") return false;
  fail(BRAID_ERR_INVALID_ARGUMENT, "BRAID_INTRANODE='", *v, "' is not on, off or auto");
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
  mine.intranode = intranode_wanted(env) ? 1 : 0;
  const std::string id = local_host_identity(env, config.rank);
  std::strncpy(mine.id, id.c_str(), sizeof mine.id - 1);
  std::vector<HostRecord> all(static_cast<size_t>(config.size));
  bootstrap.allgather(&mine, all.data(), sizeof mine);
  for (const HostRecord &r : all) {
    out.host_ids.emplace_back(r.id, strnlen(r.id, sizeof r.id));
    out.pids.push_back(r.pid);
    out.intranode = out.intranode && r.intranode != 0;
  }
  return out;
}

NodeMap NodeDiscovery::map_of(const std::vector<int> &members, int me) const {
  std::vector<std::string> ids;
  ids.reserve(members.size());
  for (int w : members) ids.push_back(host_ids[static_cast<size_t>(w)]);
  return make_node_map(ids, me);
}

}  // namespace braid::detail
