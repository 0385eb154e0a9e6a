// Message sizes and iteration counts: parsing "64K"-style sizes, the doubling sweep from
// --min-bytes to --max-bytes, and how many iterations each size gets.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace braid_bench {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kGiB = 1024 * kMiB;
// The largest size accepted: a sweep must still fit in memory several times over.
constexpr size_t kMaxBytes = 64 * kGiB;

// "8", "64K", "64M", "2G" (1024-based; k/m/g also accepted). Returns nullopt for anything else,
// for 0 and for more than kMaxBytes, with the reason in *why.
std::optional<size_t> parse_size(std::string_view text, std::string *why);

// The sizes of a sweep: min_bytes, 2*min_bytes, 4*min_bytes, ... while <= max_bytes, each
// rounded down to a multiple of elem_size but at least one element; duplicates that rounding
// creates are dropped, so the list is strictly increasing. Requires min_bytes <= max_bytes.
std::vector<size_t> size_list(size_t min_bytes, size_t max_bytes, size_t elem_size);

struct Iterations {
  int iters;
  int warmup;
};

// Defaults scale down with size like OSU's: 1000 timed iterations (100 warm-up) up to 8 KiB,
// then 1000*sqrt(8 KiB/bytes) (at least 10; 11 at 64 MiB) with a tenth as many warm-ups (at
// least 2). An explicit --iters or --warmup applies to every size; with only --iters given
// the warm-ups are a tenth of it (at least 2).
Iterations iterations_for(size_t bytes, std::optional<int> iters, std::optional<int> warmup);

}  // namespace braid_bench
