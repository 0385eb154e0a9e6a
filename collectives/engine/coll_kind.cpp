// The names of the collective kinds, in a file of its own so tools that evaluate the selection
// table (braid-bench) can compile it without the engine.
#include "engine/coll_args.hpp"

namespace braid::coll {

const char *kind_name(CollKind kind) {
  switch (kind) {
    case CollKind::allreduce:
      return "allreduce";
    case CollKind::broadcast:
      return "broadcast";
    case CollKind::barrier:
      return "barrier";
  }
  return "collective";
}

}  // namespace braid::coll
