#include "intranode/single_copy.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>

#include <algorithm>
#include <bit>
#include <cerrno>

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
  c.retrying = false;
  if (c.ns_per_byte[1] == 0) return true;  // each path once before choosing
  if (c.ns_per_byte[0] == 0) return false;
  const bool single_best = c.ns_per_byte[1] < c.ns_per_byte[0];
  if (++c.since_retry < c.retry_every) return single_best;
  // The other path's figure is old; the machine may have changed since.
  c.since_retry = 0;
  c.retrying = true;
  return !single_best;
}

void CopyChooser::measured(bool single, size_t bytes, uint64_t ns) {
  Class &c = classes_[class_of(bytes)];
  const double r = static_cast<double>(ns) / static_cast<double>(std::max<size_t>(bytes, 1));
  double &mine = c.ns_per_byte[single ? 1 : 0];
  const bool single_was_best = c.ns_per_byte[1] < c.ns_per_byte[0];
  // A retry replaces a figure that may be minutes old; the path in use moves smoothly, so one
  // slow call (a descheduled peer) does not flip the choice.
  const size_t other = single ? 0 : 1;
  // The first measurement while both figures are the model's: the model predicts one reader's
  // copy, a measurement is the whole call (the agreement, n-1 peers' blocks); keep the model's
  // ratio between the paths in the measurement's units, so the other path still waits for its
  // retry.
  if (c.predicted[0] && c.predicted[1] && mine > 0) c.ns_per_byte[other] *= r / mine;
  const bool replace = mine == 0 || c.retrying || c.predicted[single ? 1 : 0];
  c.predicted[single ? 1 : 0] = false;
  mine = replace ? r : 0.75 * mine + 0.25 * r;
  if (!c.retrying) return;
  c.retrying = false;
  const bool single_is_best = c.ns_per_byte[1] < c.ns_per_byte[0];
  c.retry_every =
      single_is_best == single_was_best ? std::min(c.retry_every * 4, kLastRetry) : kFirstRetry;
}

void CopyChooser::seed(size_t bytes, double windows_ns_per_byte, double single_ns_per_byte) {
  Class &c = classes_[class_of(bytes)];
  if (windows_ns_per_byte <= 0 || single_ns_per_byte <= 0) return;
  c.ns_per_byte = {windows_ns_per_byte, single_ns_per_byte};
  c.predicted = {true, true};
}

double CopyChooser::rate(bool single, size_t bytes) const {
  return classes_[class_of(bytes)].ns_per_byte[single ? 1 : 0];
}

}  // namespace braid::coll
