#include "algorithm_name.hpp"

#include <cstdlib>

#include "text.hpp"

#ifdef BRAID_BENCH_HAVE_SELECTION
#include "selection/selection.hpp"
#endif

namespace braid_bench {
namespace {

const char *override_variable(Collective c) {
  switch (c) {
    case Collective::allreduce:
      return "BRAID_ALLREDUCE_ALGO";
    case Collective::broadcast:
      return "BRAID_BROADCAST_ALGO";
    case Collective::barrier:
      return nullptr;
  }
  return nullptr;
}

std::string forced_algorithm(Collective c) {
  const char *var = override_variable(c);
  const char *value = var ? std::getenv(var) : nullptr;
  return value ? value : "";
}

#ifdef BRAID_BENCH_HAVE_SELECTION
braid::coll::CollKind kind_of(Collective c) {
  switch (c) {
    case Collective::allreduce:
      return braid::coll::CollKind::allreduce;
    case Collective::broadcast:
      return braid::coll::CollKind::broadcast;
    case Collective::barrier:
      return braid::coll::CollKind::barrier;
  }
  return braid::coll::CollKind::barrier;
}
#endif

}  // namespace

std::string braid_algorithm(Collective c, size_t bytes, size_t count, int ranks) {
  if (ranks <= 1) return "local";
  const std::string forced = forced_algorithm(c);
  if (!forced.empty()) return forced;
#ifdef BRAID_BENCH_HAVE_SELECTION
  // Exactly what libbraid's launch() asks: choose(kind, bytes, count, ranks). The overrides
  // are empty here (a forced name returned above), so this is the rule table itself.
  static const braid::coll::SelectionTable table = braid::coll::SelectionTable::defaults();
  const braid::coll::Choice choice = table.choose(kind_of(c), bytes, count, ranks);
  return cat("auto(", choice.algorithm->name, ")");
#else
  (void)bytes;
  (void)count;
  return "auto";
#endif
}

bool braid_algorithm_exists(Collective c, const std::string &name, std::string *why) {
#ifdef BRAID_BENCH_HAVE_SELECTION
  if (braid::coll::find_algorithm(kind_of(c), name) != nullptr) return true;
  std::string valid;
  for (const braid::coll::Algorithm &a : braid::coll::all_algorithms()) {
    if (a.kind != kind_of(c)) continue;
    if (!valid.empty()) valid += ", ";
    valid += a.name;
  }
  if (why) *why = cat("not a braid ", braid_bench::name(c), " algorithm; valid: ", valid);
  return false;
#else
  (void)c;
  (void)name;
  (void)why;
  return true;
#endif
}

}  // namespace braid_bench
