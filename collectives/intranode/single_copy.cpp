#include "intranode/single_copy.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <utility>

namespace braid::coll {

SharedRef cma_ref(const void *p) {
  SharedRef r;
  r.fd = SharedRef::kCma;
  r.offset = reinterpret_cast<uintptr_t>(p);
  return r;
}

bool cma_read(int pid, uint64_t addr, void *dst, size_t bytes) {
  auto *out = static_cast<char *>(dst);
  while (bytes > 0) {
    iovec local{out, bytes};
    iovec remote{reinterpret_cast<void *>(static_cast<uintptr_t>(addr)), bytes};
    const ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) errno = EFAULT;  // a partial read that stopped at an unmapped page
      return false;
    }
    out += got;
    addr += static_cast<uint64_t>(got);
    bytes -= static_cast<size_t>(got);
  }
  return true;
}

void allow_cma_readers() {
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // EINVAL without Yama: nothing to allow
#endif
}

size_t CopyChooser::class_of(size_t bytes) {
  const size_t steps = std::bit_width(std::max(bytes, kSingleCopyMinBytes) / kSingleCopyMinBytes);
  return std::min(steps - 1, kClasses - 1);
}

bool CopyChooser::prefer_single(size_t bytes) {
  Class &c = classes_[class_of(bytes)];
  if (c.burst > 0 || c.late) {  // the retry goes on (measured() ends it)
    c.retrying = true;
    return !c.single_was_best;
  }
  c.retrying = false;
  if (c.ns_per_byte[1] == 0) return true;  // each path once before choosing
  if (c.ns_per_byte[0] == 0) return false;
  // A seeded class's first call goes single copy whatever the model says: it is cold either way
  // and not counted, and single copy's first call is the dearest to pay later. The kernel's
  // first write into each page of a receive buffer costs about 7 us on the 2-core EPYC VM (once
  // per page, whatever the system call; a memset by the process does not pay it): a 64 MiB
  // allgather's first single copy took 125-156 ms against 20 warm. Paid at the first retry it
  // fell inside a benchmark's timed calls and doubled a 64 MiB allgather's average. The price:
  // a program that makes only a call or two of a size pays it where the windows would not have.
  // Where the others keep voting for the windows (a peer without CMA), the model decides from
  // the fourth call on (a retry's first call is not counted either).
  if (c.cold[1] && c.predicted[1]) {
    if (c.since_retry + 1 < kExplore) {
      ++c.since_retry;
      return true;
    }
    c.cold[1] = false;  // the others kept voting for the windows: the model decides from here
  }
  const bool single_best = c.ns_per_byte[1] < c.ns_per_byte[0];
  if (++c.since_retry < c.retry_every) return single_best;
  // The other path's figure is old; the machine may have changed since.
  c.since_retry = 0;
  c.retrying = true;
  c.single_was_best = single_best;
  return !single_best;
}

void CopyChooser::measured(bool single, size_t bytes, uint64_t ns) {
  Class &c = classes_[class_of(bytes)];
  const double r = static_cast<double>(ns) / static_cast<double>(std::max<size_t>(bytes, 1));
  const size_t path = single ? 1 : 0;  // index of the path this call took
  double &mine = c.ns_per_byte[path];
  // A retry replaces a figure that may be minutes old; the path in use moves smoothly, so one
  // slow call (a descheduled peer) does not flip the choice.
  const size_t other = 1 - path;
  // In a seeded class, each path's first call is cold (single copy's first writes into the
  // receive buffer; the windows' first call after it, 2.6 ms against 0.1 at 1 MiB): not counted,
  // the model's figure stands.
  if (std::exchange(c.cold[path], false) && c.predicted[path] && !c.retrying) {
    // The windows' first call after it is the cold one, even where they ran before it (a
    // broadcast's root goes windows until its readers have said what they want).
    if (single) c.cold[0] = c.predicted[0];
    return;
  }
  // A call of the retried path (the vote may have put a retry on the preferred path instead:
  // then it counts as any call and ends the retry).
  const bool retried = c.retrying && single != c.single_was_best;
  // A broadcast's or scatter's reader says what it wants after a call, and the root may act on
  // it a call later: a retry's first call on the path kept is given one more call, counted as
  // any call of its path; a second ends the retry (the others voted against it).
  const bool late = c.retrying && !retried && c.burst == 0 && !c.late;
  c.late = late;
  if (retried) c.excess += std::max(0.0, r - c.ns_per_byte[c.single_was_best ? 1 : 0]);
  // A retry's first call only warms the path up (the first windowed call after a run of single
  // copies took 76-94 us at 32-64 KiB on the VM, the next 3-5): it is not counted.
  if (retried && c.burst == 0 && mine > 0) {
    c.burst = 1;
    c.last_retry = r;
    return;
  }
  const bool replace = mine == 0 || (retried && c.burst == 1) || c.predicted[path];
  c.predicted[path] = false;
  // The first call back on a path after a retry of the other one is not counted (it pays for
  // coming back: 4x on the VM for single copy after the windows); a slow call moves the figure
  // at most as one of twice the figure would.
  const bool skip = c.settling && !replace && !c.retrying;
  c.settling = false;
  if (!skip)
    mine = replace ? r : retried ? std::min(mine, r) : 0.75 * mine + 0.25 * std::min(r, 2 * mine);
  // While the other path has only the model's figure, it follows this one's by the model's
  // ratio: the model predicts one reader's copy, a measurement is the whole call (the
  // agreement, n-1 peers' blocks), so only the ratio carries over; and it follows the warm
  // figure, not a cold first call's.
  if (c.predicted[other] && c.model[0] > 0 && c.model[1] > 0)
    c.ns_per_byte[other] = mine * c.model[other] / c.model[path];
  if (!c.retrying || late) return;
  c.retrying = false;
  const bool single_is_best = c.ns_per_byte[1] < c.ns_per_byte[0];
  // Go on while the retried path still loses but got faster by a quarter than the call before
  // (warming up), or is within kCloseRetry of the path kept (it may still win once warm): a
  // warm path that loses by more costs two calls (64 MiB allgather: 22 then 20 ms on single
  // copy against 10 on the windows).
  const bool warming = r < 0.75 * c.last_retry;
  const bool near_kept = r < kCloseRetry * c.ns_per_byte[c.single_was_best ? 1 : 0];
  c.last_retry = r;
  if (retried && single_is_best == c.single_was_best && c.burst + 1 < retry_calls_ &&
      (warming || near_kept)) {
    ++c.burst;
    return;
  }
  c.burst = 0;
  c.settling = true;
  const double excess = std::exchange(c.excess, 0.0);
  if (single_is_best != c.single_was_best) {
    c.retry_every = kFirstRetry;
    return;
  }
  const double kept = c.ns_per_byte[single_is_best ? 1 : 0];
  const double budget = kept > 0 ? excess / (kRetryBudget * kept) : 0;
  c.retry_every = std::max(std::min(std::max(c.retry_every, kFirstRetry) * 4, kLastRetry),
                           static_cast<uint32_t>(std::min<double>(budget, kLongestRetry)));
}

void CopyChooser::seed(size_t bytes, double windows_ns_per_byte, double single_ns_per_byte) {
  Class &c = classes_[class_of(bytes)];
  if (windows_ns_per_byte <= 0 || single_ns_per_byte <= 0) return;
  c.ns_per_byte = {windows_ns_per_byte, single_ns_per_byte};
  c.model = c.ns_per_byte;
  c.predicted = {true, true};
}

bool CopyChooser::preferred(size_t bytes) const {
  const Class &c = classes_[class_of(bytes)];
  if (c.burst > 0 || c.late) return c.single_was_best;
  if (c.ns_per_byte[1] == 0) return true;
  if (c.ns_per_byte[0] == 0) return false;
  return c.ns_per_byte[1] < c.ns_per_byte[0];
}

double CopyChooser::rate(bool single, size_t bytes) const {
  return classes_[class_of(bytes)].ns_per_byte[single ? 1 : 0];
}

}  // namespace braid::coll
