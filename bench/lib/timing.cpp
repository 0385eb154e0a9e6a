#include "timing.hpp"

#include <chrono>

namespace braid_bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

double time_per_call(Backend &backend, Mode mode, int iters, int warmup,
                     const std::function<void()> &call, const std::function<void()> &touch) {
  if (iters <= 0) return 0.0;
  if (mode == Mode::osu) {
    double total = 0.0;
    for (int i = 0; i < warmup + iters; ++i) {
      if (touch) touch();
      backend.barrier();
      const auto t0 = Clock::now();
      call();
      const auto t1 = Clock::now();
      if (i >= warmup) total += seconds(t0, t1);
    }
    return total / iters;
  }
  for (int i = 0; i < warmup; ++i) call();
  backend.barrier();
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) call();
  const auto t1 = Clock::now();
  return seconds(t0, t1) / iters;
}

Latency across_ranks(Backend &backend, double seconds_per_call) {
  const double us = seconds_per_call * 1e6;
  double lo = us, hi = us, sum = us;
  backend.allreduce(&lo, &lo, 1, Dtype::float64, Op::min);
  backend.allreduce(&hi, &hi, 1, Dtype::float64, Op::max);
  backend.allreduce(&sum, &sum, 1, Dtype::float64, Op::sum);
  return {sum / backend.size(), lo, hi};
}

}  // namespace braid_bench
