// braid_comm_split and braid_comm_dup: the members agree on who goes where and on a context id
// with two allreduces over the parent; the child is a new view over the process's transport
// (no connection is opened) with a region of the node's shared segment where its ranks share a
// node, set up with two more allreduces over the parent (so the child's own calls start at #0, and
// the result is the same on every parent rank whatever color it chose).
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

// Whether every member of `comm` passes true: an allreduce (min).
bool comm_agrees(Comm &comm, bool ok) {
  uint8_t v = ok ? 1 : 0;
  finish(comm, start_allreduce(comm, &v, &v, 1, BRAID_UINT8, BRAID_MIN));
  return v != 0;
}

// A context id no parent rank uses, reserved on this rank: the lowest free in the union of every
// parent rank's ids (the same on every member, which all see the same union; a superset of the
// members' ids, which is what matters: no two members may share two communicators with one
// id). Another thread's split may reserve an id between the union and the reservation, so the
// ranks then agree whether all reserved it, and try again if not. -1 when none is free.
int agree_on_context(Comm &parent) {
  Process &p = parent.process;
  for (;;) {
    std::vector<uint8_t> used = p.contexts_in_use();
    finish(parent,
           start_allreduce(parent, used.data(), used.data(), used.size(), BRAID_UINT8, BRAID_MAX));
    const auto free_id = std::find(used.begin(), used.end(), 0);
    if (free_id == used.end()) return -1;
    const auto id = static_cast<size_t>(free_id - used.begin());
    const bool mine = p.reserve_context(id);
    if (comm_agrees(parent, mine)) return static_cast<int>(id);
    if (mine) p.release_context(id);
  }
}

// What tells a child apart from every other communicator with its context id, alike on its
// members. Ids are unique only among one rank's live communicators: the children of one split
// with different colors share theirs, and a freed child's id is given again. So: the parent's
// tag, the parent's call number at this split (no two splits of a parent share it; every parent
// rank made the same calls) and the members (no two children of a split share them). Without
// it, a mismatch notice about one child's call #0 failed the other's #0 (and a later dup's).
uint64_t split_tag(const Comm &parent, const std::vector<int> &members) {
  uint64_t h = parent.tag;
  auto mix = [&h](uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
  };
  mix(parent.context);
  mix(parent.next_seq);
  for (int m : members) mix(static_cast<uint64_t>(m));
  return h;
}

}  // namespace

Comm *split(Comm &parent, int color, int key) {
  const std::vector<int64_t> pairs = exchange_colors(parent, color, key);
  // A bad color is refused after the exchange, on every rank: had the rank that passed it
  // returned first, the others' exchange would have met its next call, and the parent's calls
  // would stay out of step for good.
  if (color < 0 && color != BRAID_UNDEFINED)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", parent.rank, ": comm_split: color ", color,
         " is negative (only BRAID_UNDEFINED is allowed)");
  for (int r = 0; r < parent.size; ++r)
    if (const int64_t c = pairs[2 * static_cast<size_t>(r)]; c < 0 && c != BRAID_UNDEFINED)
      fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", parent.rank, ": comm_split: rank ", r,
           " passed color ", c, ", which is negative (only BRAID_UNDEFINED is allowed)");
  // Every parent rank takes part, whatever its color: the union is over all of them.
  const int context = agree_on_context(parent);
  if (context < 0)
    fail(BRAID_ERR_UNSUPPORTED, "rank ", parent.rank, ": comm_split: every one of the ",
         coll::Scheduler::kMaxContexts,
         " context ids is in use by some rank; free communicators first (one on which a "
         "collective failed keeps its id until braid_finalize)");
  if (color == BRAID_UNDEFINED) {
    parent.process.release_context(static_cast<size_t>(context));
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
  Process &p = parent.process;
  Comm *child = &p.add(std::make_unique<Comm>(p, members, me, static_cast<uint32_t>(context),
                                              split_tag(parent, members)));
  try {
    // The child's channel takes a region of the node segment the world's setup made.
    child->attach_node(setup_comm_node(p.nodes, p.node_pool, &p.world_node_map, members, me,
                                       static_cast<uint32_t>(context), p.world->config.job_key,
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
