#include "intranode/futex.hpp"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

#include "node/home_cpu.hpp"

namespace braid::coll {
namespace {

// Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
long futex(const std::atomic<uint32_t> *word, int op, uint32_t val, const timespec *timeout) {
  return syscall(SYS_futex, reinterpret_cast<const uint32_t *>(word), op, val, timeout, nullptr, 0);
}

long membarrier(int cmd) {
  return syscall(SYS_membarrier, cmd, 0, 0);
}

// Whether the kernel fences other processes' threads on request (Linux 4.16 and later, unless
// a seccomp filter refuses the call).
bool global_expedited() {
  static const bool ok = [] {
    const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    return cmds >= 0 && (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0 &&
           (cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0;
  }();
  return ok;
}

}  // namespace

void enable_light_publish() {
  static const bool registered =
      global_expedited() && membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
  if (registered) light_publish.store(true, std::memory_order_relaxed);
}

void Sleeper::sleep(const FlagWait &flag, long timeout_us, bool long_idle) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  const uint32_t amount = long_idle ? kLongSleeper : 1;
  if (flag.sleepers != announced_ || amount != amount_) {
    release();
    if (flag.sleepers != nullptr) {
      flag.sleepers->fetch_add(amount, std::memory_order_seq_cst);
      announced_ = flag.sleepers;
      amount_ = amount;
      // The other half of publish's Dekker: every running thread of the registered processes
      // executes a full fence, so an owner that published without one either has its value
      // seen below or sees this sleeper, now and at every later publish. Owners that are not
      // registered publish with a fence. Should the call fail where the query said it works
      // (a filter on its argument), a wake may be missed: the sleep's timeout bounds that.
      if (global_expedited()) membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
    }
  }
  const uint32_t seen = flag.word->load(std::memory_order_seq_cst);
  if (static_cast<int32_t>(seen - flag.target) < 0) {
    timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000};
    futex(flag.word, FUTEX_WAIT, seen, &ts);
  }
}

void Sleeper::release() {
  if (announced_ == nullptr) return;
  announced_->fetch_sub(amount_, std::memory_order_seq_cst);
  announced_ = nullptr;
}

void futex_wake(std::atomic<uint32_t> &word, uint32_t sleepers) {
  const long woken = futex(&word, FUTEX_WAKE, INT_MAX, nullptr);
  // The word's announcements are for all of the owner's counters: only a wake that woke
  // someone while a long sleeper was announced moves the owner.
  if (woken > 0 && sleepers >= kLongSleeper) detail::return_home();
}

}  // namespace braid::coll
