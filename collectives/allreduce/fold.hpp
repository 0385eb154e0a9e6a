// The non-power-of-two pattern shared by recursive doubling and Rabenseifner (as in MPICH):
// with rem = size - pof2, the first 2*rem ranks pair up; each even one hands its data to its odd
// neighbour and sits out the power-of-two core, then gets the result back from it.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

struct Fold {
  int pof2 = 1;      // largest power of two <= size
  int rem = 0;       // size - pof2
  int newrank = -1;  // rank inside the power-of-two core, -1 while sitting out

  // The real rank of core rank `core`.
  int real(int core) const { return core < rem ? core * 2 + 1 : core + rem; }
};

Fold make_fold(int rank, int size);

// Message steps 0 and 0xfffe are reserved for the fold; algorithms number theirs from 1.
constexpr uint32_t kFoldInStep = 0;
constexpr uint32_t kFoldOutStep = 0xfffe;

// Before the core: an even rank among the first 2*rem sends `buf`; its odd neighbour reduces it
// into its own `buf` (using `tmp`, `bytes` long).
Task fold_in(CollContext &ctx, const CollArgs &args, Fold fold, char *buf, char *tmp);
// After the core: the odd neighbour returns the result to the even rank that sat out.
Task fold_out(CollContext &ctx, const CollArgs &args, Fold fold, char *buf);

}  // namespace braid::coll
