// The ring reduce-scatter phase: block c of every rank's input travels once around the ring,
// starting at rank c+1 and accumulating each rank's contribution (the partial result from the
// left first, then this rank's), and ends at rank c, which alone holds its reduction. Each
// element is reduced in one place in one order, so the result does not depend on timing.
#pragma once

#include <cstdint>

#include "engine/coll_args.hpp"
#include "phases/blocks.hpp"

namespace braid::coll {

// `src`: this rank's whole input (blocks at blocks.off); `out`: where this rank's reduced block
// goes (blocks.len[rank] bytes; may be src + blocks.off[rank]). `work`: scratch of at least the
// largest block, twice. Messages are numbered from step0 to step0 + n - 2.
Task ring_reduce_scatter(CollContext &ctx, const char *src, char *out, const Blocks &blocks,
                         const CollArgs &args, char *work, uint32_t step0);

}  // namespace braid::coll
