// Bit-for-bit equality of two scalars: what the reduction tests compare, since == would call
// -0.0 equal to 0.0 and NaN unequal to itself.
#pragma once

#include <cstring>

template <typename S>
bool same_bits(S a, S b) {
  return std::memcmp(&a, &b, sizeof(S)) == 0;
}
