// The v-variants' counts are per rank pair: rank r's recvcounts[s] must equal what rank s
// sends r. A rank that sees the two differ fails the call with a message naming both sides,
// which the scheduler tells every other rank (detail::Disagreement).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "error.hpp"

namespace braid::coll {

// "rank 2's recvcounts[1] is 5 elements, rank 1's sendcount is 4".
inline std::string v_count_text(int rank, const char *mine_name, int index, uint64_t mine,
                                const std::string &theirs_named, const std::string &theirs) {
  return detail::cat("rank ", rank, "'s ", mine_name, "[", index, "] is ", mine, " elements, ",
                     theirs_named, " is ", theirs);
}

// Throws unless `mine` (rank `rank`'s `mine_name`[peer]) == `theirs` (rank `peer`'s
// `their_name`, indexed by `their_index` when >= 0).
inline void check_v_count(int rank, const char *mine_name, int peer, uint64_t mine,
                          const char *their_name, uint64_t theirs, int their_index = -1) {
  if (mine == theirs) return;
  throw detail::Disagreement(v_count_text(
      rank, mine_name, peer, mine,
      detail::cat("rank ", peer, "'s ", their_name,
                  their_index >= 0 ? detail::cat("[", their_index, "]") : std::string()),
      detail::cat(theirs)));
}

}  // namespace braid::coll
