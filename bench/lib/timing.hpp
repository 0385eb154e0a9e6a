// The timing loop. Each rank measures its own average time per call; the ranks then agree on
// the minimum, average and maximum of those averages.
//
//   osu        for each iteration: barrier (untimed), then time one call; average = sum / iters
//   pipelined  warm-up calls, one barrier, then time `iters` calls back to back (nccl-tests);
//              average = total / iters
#pragma once

#include <functional>

#include "backend.hpp"
#include "types.hpp"

namespace braid_bench {

// This rank's average seconds per call of `call` (warm-up calls are not timed).
// `touch` (when set; osu mode) runs before every call, before its barrier, untimed.
double time_per_call(Backend &backend, Mode mode, int iters, int warmup,
                     const std::function<void()> &call,
                     const std::function<void()> &touch = nullptr);

struct Latency {
  double avg_us = 0, min_us = 0, max_us = 0;
};
// Collective: every rank passes its own seconds per call and gets the same Latency back.
Latency across_ranks(Backend &backend, double seconds_per_call);

}  // namespace braid_bench
