// braid-info: what this braid installation can do here: version, plugins (and why any cannot be
// used), the transport BRAID_TRANSPORT would pick, and the algorithm selection table.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api/model_setup.hpp"
#include "config/env_config.hpp"
#include "error.hpp"
#include "numa_report.hpp"
#include "plugin/plugin_loader.hpp"
#include "selection/selection.hpp"
#include "tuning/machine_profile.hpp"

namespace {

void usage() {
  std::puts(
      "usage: braid-info [--explain [RANKS]] [--nodes N] [--help]\n"
      "  Prints the braid version, the plugin search path, every transport plugin found and\n"
      "  whether it can be used here (and why not), the NUMA topology, binding, RDMA devices'\n"
      "  nodes and buffer placement, the transport BRAID_TRANSPORT selects, and\n"
      "  the algorithm selection table.\n"
      "  --explain [RANKS]  also print the algorithm chosen per message size for RANKS ranks\n"
      "                     (default: BRAID_SIZE, else 4) and, for allreduce and broadcast,\n"
      "                     the cost model's predicted time of every candidate (its figures:\n"
      "                     BRAID_TUNING_FILE, else typical ones; BRAID_SELECTION=rules: the\n"
      "                     rule table), honouring the BRAID_<KIND>_ALGO overrides.\n"
      "  --nodes N          the RANKS ranks are spread evenly over N nodes (default 1: all on\n"
      "                     one node, where the node-local shared-memory path is chosen unless\n"
      "                     BRAID_INTRANODE=off; N = RANKS: one rank per node). Under braidrun\n"
      "                     the defaults are the job's: BRAID_SIZE ranks, BRAID_LOCAL_SIZE per\n"
      "                     node.");
}

}  // namespace

int main(int argc, char **argv) {
  using namespace braid;
  bool explain = false;
  int ranks = 4;
  int nodes = 1;
  if (const char *s = std::getenv("BRAID_SIZE")) ranks = std::atoi(s) > 0 ? std::atoi(s) : 4;
  bool nodes_given = false;
  try {
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
        usage();
        return 0;
      } else if (!std::strcmp(argv[i], "--explain")) {
        explain = true;
        if (i + 1 < argc && argv[i + 1][0] != '-')
          ranks = static_cast<int>(detail::parse_integer(argv[++i], "--explain", 1, 1 << 20));
      } else if (!std::strcmp(argv[i], "--nodes") && i + 1 < argc) {
        nodes = static_cast<int>(detail::parse_integer(argv[++i], "--nodes", 1, 1 << 20));
        nodes_given = true;
      } else {
        std::fprintf(stderr, "braid-info: unknown option '%s' (see --help)\n", argv[i]);
        return 2;
      }
    }
    // Run as a rank under braidrun: its job's layout, BRAID_LOCAL_SIZE ranks on each host (as
    // braidrun places them), unless --nodes says otherwise.
    if (const char *l = std::getenv("BRAID_LOCAL_SIZE"); !nodes_given && l && std::atoi(l) > 0)
      nodes = (ranks + std::atoi(l) - 1) / std::atoi(l);
    std::printf("braid %s\n", BRAID_VERSION_STRING);
    std::printf("plugin search path:\n");
    for (const std::string &dir : detail::plugin_search_dirs()) std::printf("  %s\n", dir.c_str());
    std::printf("transport plugins:\n");
    auto names = detail::discover_plugins();
    if (names.empty()) std::printf("  (none found)\n");
    for (const std::string &name : names) {
      detail::Plugin plugin;
      std::string why;
      if (!detail::open_plugin(name, &plugin, &why)) {
        std::printf("  %-8s cannot load: %s\n", name.c_str(), why.c_str());
        continue;
      }
      char reason[256] = {0};
      bool usable = plugin.ops->probe == nullptr || plugin.ops->probe(reason, sizeof reason);
      std::printf("  %-8s %s (%s)%s%s\n", name.c_str(), usable ? "usable" : "not usable here",
                  plugin.path.c_str(), usable ? "" : ": ", usable ? "" : reason);
    }
    try {
      int local = 1;
      if (const char *s = std::getenv("BRAID_LOCAL_SIZE")) local = std::max(1, std::atoi(s));
      std::fputs(braid_info::numa_report(local).c_str(), stdout);
    } catch (const detail::Failure &f) {
      std::printf("numa: unknown: %s\n", f.what());
    }
    std::string why;
    if (auto profile = detail::profile_from_environment(&why))
      std::fputs(detail::describe(*profile).c_str(), stdout);
    else
      std::printf(
          "machine profile: %s\n",
          why.empty() ? "none (BRAID_TUNING_FILE unset; braid-tune measures one)" : why.c_str());
    const char *requested = std::getenv("BRAID_TRANSPORT");
    std::string req = requested && *requested ? requested : "auto";
    std::vector<detail::PluginProblem> problems;
    try {
      detail::Plugin chosen = detail::select_transport(req, &problems);
      std::printf("BRAID_TRANSPORT=%s selects: %s\n", req.c_str(), chosen.name.c_str());
    } catch (const detail::Failure &f) {
      std::printf("BRAID_TRANSPORT=%s selects nothing: %s\n", req.c_str(), f.what());
    }
    auto table = coll::SelectionTable::defaults();
    table.set_overrides_from_environment();
    // As libbraid does (api/model_setup.cpp) for a job whose ranks share this environment,
    // with the same checks: what braid_init would refuse is said, not silently replaced.
    try {
      const detail::ModelRequest request = detail::model_request_from_environment();
      if (request.use_model)
        table.set_model(request.profile
                            ? coll::CostInputs::from_profile(*request.profile, "BRAID_TUNING_FILE")
                            : coll::CostInputs::typical());
    } catch (const detail::Failure &f) {
      std::printf("selection: %s (braid_init would fail on it; typical figures shown)\n", f.what());
      table.set_model(coll::CostInputs::typical());
    }
    std::printf("algorithms:\n");
    for (const auto &a : coll::all_algorithms())
      std::printf("  %-10s %-20s %s\n", coll::kind_name(a.kind), a.name, a.summary);
    coll::Topology where = coll::Topology::flat(ranks);
    where.nodes = std::min(nodes, ranks);
    where.max_local = (ranks + where.nodes - 1) / where.nodes;
    const char *intranode = std::getenv("BRAID_INTRANODE");
    where.intranode = intranode == nullptr || std::strcmp(intranode, "off") != 0;
    std::string text = table.explain(where);
    if (!explain) text = text.substr(0, text.find("choice per size"));
    std::fputs(text.c_str(), stdout);
  } catch (const detail::Failure &f) {
    std::fprintf(stderr, "braid-info: %s\n", f.what());
    return 1;
  }
  return 0;
}
