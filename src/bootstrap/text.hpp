// Wording shared by the bootstrap's messages, so every error names ranks the same way.
#pragma once

#include <string>
#include <vector>

#include "error.hpp"

namespace braid::detail::bs {

// "rank 2", "ranks 2, 5" or, for long lists, "ranks 1, 2, ..., 16 and 40 more".
inline std::string rank_list(const std::vector<int> &ranks) {
  constexpr size_t kShown = 16;
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size() && i < kShown; ++i) out += cat(i == 0 ? "" : ", ", ranks[i]);
  if (ranks.size() > kShown) out += cat(" and ", ranks.size() - kShown, " more");
  return out;
}

}  // namespace braid::detail::bs
