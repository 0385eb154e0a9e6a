// braid_comm_split and braid_comm_dup: the members agree on who goes where and on a context id
// with two allreduces over the parent; the child is a new view over the process's transport
// (no connection is opened) with a node segment of its own where its ranks share a node, set up
// with two more allreduces over the parent (so the child's own calls start at #0, and the
// result is the same on every parent rank whatever color it chose).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "api/comm_object.hpp"
#include "error.hpp"
#include "log.hpp"

namespace braid::detail {
namespace {

// Every parent rank's (color, key), from an allreduce (max) in which each rank fills its own
// pair and leaves the others at the minimum.
std::vector<int64_t> exchange_colors(Comm &parent, int color, int key) {
  std::vector<int64_t> pairs(2 * static_cast<size_t>(parent.size), INT64_MIN);
  pairs[2 * static_cast<size_t>(parent.rank)] = color;
  pairs[2 * static_cast<size_t>(parent.rank) + 1] = key;
  finish(parent,
         start_allreduce(parent, pairs.data(), pairs.data(), pairs.size(), BRAID_INT64, BRAID_MAX));
  return pairs;
}

// The context ids used by any parent rank (a superset of those used by the child's members,
// which is what matters: no two of them may share two communicators with one id).
std::vector<uint8_t> contexts_in_use(Comm &parent) {
  Process &p = parent.process;
  std::vector<uint8_t> used(p.used_contexts.size());
  for (size_t i = 0; i < used.size(); ++i) used[i] = p.used_contexts.test(i) ? 1 : 0;
  finish(parent,
         start_allreduce(parent, used.data(), used.data(), used.size(), BRAID_UINT8, BRAID_MAX));
  return used;
}

// Whether every member of `comm` passes true: an allreduce (min).
bool comm_agrees(Comm &comm, bool ok) {
  uint8_t v = ok ? 1 : 0;
  finish(comm, start_allreduce(comm, &v, &v, 1, BRAID_UINT8, BRAID_MIN));
  return v != 0;
}

}  // namespace

Comm *split(Comm &parent, int color, int key) {
  if (color < 0 && color != BRAID_UNDEFINED)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", parent.rank, ": comm_split: color ", color,
         " is negative (only BRAID_UNDEFINED is allowed)");
  const std::vector<int64_t> pairs = exchange_colors(parent, color, key);
  const std::vector<uint8_t> used = contexts_in_use(parent);
  if (color == BRAID_UNDEFINED) {
    // The children's node setup agrees over the parent (setup_comm_node calls agree twice).
    comm_agrees(parent, true);
    comm_agrees(parent, true);
    return nullptr;
  }

  // Parent ranks of my color, by (key, parent rank).
  std::vector<int> order;
  for (int r = 0; r < parent.size; ++r)
    if (pairs[2 * static_cast<size_t>(r)] == color) order.push_back(r);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return pairs[2 * static_cast<size_t>(a) + 1] < pairs[2 * static_cast<size_t>(b) + 1];
  });
  std::vector<int> members;
  int me = -1;
  for (int r : order) {
    if (r == parent.rank) me = static_cast<int>(members.size());
    members.push_back(parent.members[static_cast<size_t>(r)]);
  }
  // The lowest id nobody uses: the same on every member, which all saw the same `used`.
  const auto free_id = std::find(used.begin(), used.end(), 0);
  if (free_id == used.end())
    fail(BRAID_ERR_UNSUPPORTED, "rank ", parent.rank, ": comm_split: every one of the ",
         used.size(), " context ids is in use by some rank; free communicators first");
  const auto context = static_cast<uint32_t>(free_id - used.begin());

  Process &p = parent.process;
  p.comms.push_back(std::make_unique<Comm>(p, members, me, context));
  p.used_contexts.set(context);
  Comm *child = p.comms.back().get();
  try {
    const EnvConfig &config = p.world->config;
    child->attach_node(setup_comm_node(p.nodes, members, me, config.job_key, cat("comm", context),
                                       p.world->numa_node,
                                       [&parent](bool ok) { return comm_agrees(parent, ok); }));
  } catch (...) {
    p.destroy(child);
    throw;
  }
  log(LogLevel::info, "rank ", parent.rank, ": split color ", color, " key ", key, " -> rank ", me,
      " of ", members.size(), ", context ", context);
  return child;
}

}  // namespace braid::detail
