#include "intranode/futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace braid::coll {
namespace {

// Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
long futex(const std::atomic<uint32_t> *word, int op, uint32_t val, const timespec *timeout) {
  return syscall(SYS_futex, reinterpret_cast<const uint32_t *>(word), op, val, timeout, nullptr, 0);
}

}  // namespace

void futex_sleep(const FlagWait &flag, long timeout_us) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  if (flag.sleepers) flag.sleepers->fetch_add(1, std::memory_order_seq_cst);
  const uint32_t seen = flag.word->load(std::memory_order_seq_cst);
  if (static_cast<int32_t>(seen - flag.target) < 0) {
    timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000};
    futex(flag.word, FUTEX_WAIT, seen, &ts);
  }
  if (flag.sleepers) flag.sleepers->fetch_sub(1, std::memory_order_seq_cst);
}

void futex_wake(std::atomic<uint32_t> &word) {
  futex(&word, FUTEX_WAKE, INT_MAX, nullptr);
}

}  // namespace braid::coll
