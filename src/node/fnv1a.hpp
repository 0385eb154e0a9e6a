// FNV-1a, 64 bits: a short, stable name for a string every rank computes alike (segment names
// from the job key, a machine from its host identity). Not for anything adversarial.
#pragma once

#include <cstdint>
#include <string_view>

namespace braid::detail {

inline uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace braid::detail
