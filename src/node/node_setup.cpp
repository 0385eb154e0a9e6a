#include "node/node_setup.hpp"

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "error.hpp"
#include "log.hpp"
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

// Whether every rank says yes.
bool all_agree(Bootstrap &bootstrap, bool mine) {
  std::vector<uint8_t> all(static_cast<size_t>(bootstrap.size()));
  const uint8_t b = mine ? 1 : 0;
  bootstrap.allgather(&b, all.data(), 1);
  for (uint8_t v : all)
    if (v == 0) return false;
  return true;
}

}  // namespace

std::unique_ptr<NodeResources> setup_node(Bootstrap &bootstrap, const EnvConfig &config,
                                          const EnvLookup &env, int numa_node) {
  auto res = std::make_unique<NodeResources>();
  const bool wanted = intranode_wanted(env);
  HostRecord mine{};
  mine.pid = static_cast<int32_t>(getpid());
  mine.intranode = wanted ? 1 : 0;
  const std::string id = local_host_identity(env, config.rank);
  std::strncpy(mine.id, id.c_str(), sizeof mine.id - 1);
  std::vector<HostRecord> all(static_cast<size_t>(config.size));
  bootstrap.allgather(&mine, all.data(), sizeof mine);

  std::vector<std::string> ids;
  bool everyone_wants = true;
  for (const HostRecord &r : all) {
    ids.emplace_back(r.id, strnlen(r.id, sizeof r.id));
    everyone_wants = everyone_wants && r.intranode != 0;
  }
  res->map = make_node_map(ids, config.rank);
  const NodeMap &m = res->map;
  res->topology = coll::Topology{config.size, m.nodes, m.max_local, false};
  if (!everyone_wants || m.max_local < 2) {
    log(LogLevel::info, "node-local path off: ",
        !everyone_wants ? "BRAID_INTRANODE=off" : "no two ranks share a node");
    return res;
  }

  // The leader creates the node's segment; once everyone knows whether that worked, the
  // others map it; once everyone has, the leader unlinks the name.
  const size_t bytes = coll::NodeChannel::segment_bytes(m.local_size());
  const bool shared = m.local_size() > 1;
  const std::string name = segment_name(config.job_key, "world", m.local[0], all[m.local[0]].pid);
  std::string why;
  bool ok = true;
  bool created = false;
  if (shared && m.leader()) ok = created = create_segment(name, bytes, &res->segment, &why);
  struct Unlink {
    bool on;
    const std::string &name;
    ~Unlink() {
      if (on) unlink_segment(name);
    }
  } unlink{created, name};
  const bool leaders_ok = all_agree(bootstrap, ok);
  if (leaders_ok && shared && !m.leader()) ok = open_segment(name, bytes, &res->segment, &why);
  if (leaders_ok && ok) {
    res->channel = std::make_unique<coll::NodeChannel>(res->segment.data(), m);
    if (shared) res->channel->claim_own_part(numa_node);
  }
  const bool everyone_ok = all_agree(bootstrap, leaders_ok && ok);
  if (!ok) log(LogLevel::warn, "node-local shared memory unavailable: ", why);
  if (!everyone_ok) {
    res->channel.reset();
    res->segment = ShmSegment();
    log(LogLevel::info, "node-local path off: a rank could not set up shared memory");
    return res;
  }
  res->topology.intranode = true;
  log(LogLevel::info, "node-local path on: node ", m.node, " of ", m.nodes, ", local rank ",
      m.local_rank, " of ", m.local_size(), shared ? ", segment " : "", shared ? name : "", " (",
      bytes, " bytes)");
  return res;
}

}  // namespace braid::detail
