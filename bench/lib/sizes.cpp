#include "sizes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "text.hpp"

namespace braid_bench {

std::optional<size_t> parse_size(std::string_view text, std::string *why) {
  auto fail = [&](const std::string &reason) -> std::optional<size_t> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (text.empty()) return fail("empty size");
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return fail("not a size: expected a number of bytes such as 8, 64K, 64M or 1G");
  size_t multiplier = 1;
  std::string_view suffix = text.substr(digits);
  if (suffix == "") {
    multiplier = 1;
  } else if (suffix == "K" || suffix == "k") {
    multiplier = kKiB;
  } else if (suffix == "M" || suffix == "m") {
    multiplier = kMiB;
  } else if (suffix == "G" || suffix == "g") {
    multiplier = kGiB;
  } else {
    return fail(cat("unknown suffix '", suffix, "': use K, M or G (1024-based)"));
  }
  uint64_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    value = value * 10 + static_cast<uint64_t>(text[i] - '0');
    if (value > kMaxBytes) return fail("larger than the 64G limit");
  }
  if (value > kMaxBytes / multiplier) return fail("larger than the 64G limit");
  if (value == 0) return fail("must be at least 1 byte");
  return static_cast<size_t>(value * multiplier);
}

std::vector<size_t> size_list(size_t min_bytes, size_t max_bytes, size_t elem_size) {
  std::vector<size_t> sizes;
  if (elem_size == 0 || min_bytes == 0 || min_bytes > max_bytes) return sizes;
  for (size_t s = min_bytes; s <= max_bytes; s *= 2) {
    const size_t rounded = std::max(elem_size, s / elem_size * elem_size);
    if (sizes.empty() || rounded > sizes.back()) sizes.push_back(rounded);
    if (s > SIZE_MAX / 2) break;
  }
  return sizes;
}

Iterations iterations_for(size_t bytes, std::optional<int> iters, std::optional<int> warmup) {
  constexpr size_t kSmall = 8 * kKiB;
  int n = 1000;
  if (iters) {
    n = *iters;
  } else if (bytes > kSmall) {
    const double scaled =
        1000.0 * std::sqrt(static_cast<double>(kSmall) / static_cast<double>(bytes));
    n = std::max(10, static_cast<int>(std::lround(scaled)));
  }
  const int w = warmup ? *warmup : std::max(2, n / 10);
  return {n, w};
}

}  // namespace braid_bench
