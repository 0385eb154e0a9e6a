#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task barrier_dissemination(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
