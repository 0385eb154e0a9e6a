// Sleeping on a shared-memory counter instead of burning a core: a waiter that has spun and
// yielded long enough announces itself in the counter owner's `sleepers` word and sleeps in
// FUTEX_WAIT; the owner, after publishing a new value, wakes the word only when someone sleeps,
// so the common (spinning) case costs no system call.
#pragma once

#include <atomic>
#include <cstdint>

#include "engine/coll_context.hpp"

namespace braid::coll {

// Sleeps until flag.word changes from what it holds now, or timeout_us passes. Returns at once
// when the flag is already reached.
void futex_sleep(const FlagWait &flag, long timeout_us);

void futex_wake(std::atomic<uint32_t> &word);

// Stores `value` and wakes the sleepers on `word`, if `sleepers` says there are any.
inline void publish(std::atomic<uint32_t> &word, std::atomic<uint32_t> &sleepers, uint32_t value) {
  // seq_cst store, then load: pairs with the sleeper's increment-then-recheck, so either the
  // sleeper sees the new value or the owner sees the sleeper (Dekker).
  word.store(value, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) != 0) futex_wake(word);
}

}  // namespace braid::coll
