// Sleeping on a shared-memory counter instead of burning a core: a waiter that has spun and
// yielded long enough announces itself in the counter owner's `sleepers` word and sleeps in
// FUTEX_WAIT; the owner, after publishing a new value, wakes the word only when someone sleeps,
// so the common (spinning) case costs no system call.
#pragma once

#include <atomic>
#include <cstdint>

#include "engine/coll_context.hpp"

namespace braid::coll {

// A waiter's announcement in one owner's `sleepers` word, kept across its sleeps on that
// owner's counters until it has work again: the fence that pairs with a light publish (below)
// is then paid once per wait, not once per sleep (each one interrupts every CPU that runs a
// rank, the rank being waited for included). While it is announced, the owner's publishes
// call FUTEX_WAKE; so a waiter releases it as soon as it makes progress.
class Sleeper {
 public:
  Sleeper() = default;
  Sleeper(const Sleeper &) = delete;
  Sleeper &operator=(const Sleeper &) = delete;
  ~Sleeper() { release(); }

  // Sleeps until flag.word changes from what it holds now, or timeout_us passes. Returns at
  // once when the flag is already reached. `long_idle`: the wait has been long (the scheduler's
  // kHomeAfter): its announcement counts kLongSleeper, and the waker goes home
  // (node/home_cpu.hpp).
  void sleep(const FlagWait &flag, long timeout_us, bool long_idle);
  // Withdraws the announcement, if any.
  void release();

 private:
  std::atomic<uint32_t> *announced_ = nullptr;
  uint32_t amount_ = 0;  // what the announcement added to *announced_
};

// What a sleeper whose wait has been long adds to a `sleepers` word (others add 1): many such
// sleepers woken at once land next to their waker (node/home_cpu.hpp), so the waker goes back
// to its home CPU too. Shorter sleeps, inside a collective's steps, do not count: moving ranks
// there would keep two busy ranks on one core while the other core idles.
constexpr uint32_t kLongSleeper = 1u << 16;

// Wakes the sleepers on `word`; `sleepers`: the word's announcements, as publish read them.
void futex_wake(std::atomic<uint32_t> &word, uint32_t sleepers);

// Set once this process is registered for membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED): a
// sleeper then fences every running thread of this process itself, so publish needs no fence.
inline std::atomic<bool> light_publish{false};
// Registers this process (once; a kernel or sandbox without membarrier leaves publish fenced).
void enable_light_publish();

// Stores `value` and wakes the sleepers on `word`, if `sleepers` says there are any.
inline void publish(std::atomic<uint32_t> &word, std::atomic<uint32_t> &sleepers, uint32_t value) {
  // Store, then load: either the sleeper (increment, then recheck the word) sees the new value
  // or the owner sees the sleeper (Dekker). That needs a full fence between the two on one
  // side. Here it would stall the publisher until its store leaves the store buffer, which on
  // a line the readers hold is a cache-line transfer (2 ranks, 8 B broadcast: the root's call
  // 0.25 us, 0.08 without it and the locked adds after it); so the sleeper, which is about to sleep
  // anyway, pays it with membarrier, and here only the compiler is kept from reordering.
  if (light_publish.load(std::memory_order_relaxed)) {
    word.store(value, std::memory_order_release);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (const uint32_t s = sleepers.load(std::memory_order_relaxed); s != 0) futex_wake(word, s);
    return;
  }
  word.store(value, std::memory_order_seq_cst);
  if (const uint32_t s = sleepers.load(std::memory_order_seq_cst); s != 0) futex_wake(word, s);
}

}  // namespace braid::coll
