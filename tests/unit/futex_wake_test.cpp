// The node path's sleep and wake (collectives/intranode/futex.hpp): a waiter that announces
// itself and sleeps is woken by the owner's next publish, whether publish fences (Dekker with
// seq_cst on both sides) or leaves the fence to the sleeper's membarrier. The owner publishes at
// varying moments around the sleeper's announcement, so that some wakes race with it; a missed
// wake would leave the sleeper in FUTEX_WAIT until its (long) timeout. The window in which the
// fence matters is a few hundred ns wide: these rounds show that every wake arrives in both
// modes, they cannot prove where the fence must be (futex.hpp says why it is there).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "intranode/futex.hpp"

namespace braid::coll {
namespace {

using Clock = std::chrono::steady_clock;

// Rounds of sleep-and-wake; returns the longest time a sleeper took to see its round's value.
// keep_announced: one announcement for every round, as a scheduler's wait keeps it across its
// sleeps; else a new one per round.
Clock::duration longest_wake(int rounds, long sleep_timeout_us, bool keep_announced) {
  alignas(64) std::atomic<uint32_t> word{0};
  alignas(64) std::atomic<uint32_t> sleepers{0};
  alignas(64) std::atomic<int> ready{-1};
  Clock::duration longest{};
  uint32_t last = 0;  // what the sleeper's last announcement added
  Sleeper sleeper;
  std::thread owner([&] {
    for (int i = 0; i < rounds; ++i) {
      while (ready.load(std::memory_order_acquire) != i) std::this_thread::yield();
      // 0 to a few hundred ns after the sleeper said it is about to sleep: before, during and after
      // its announcement and recheck.
      for (int spin = (i * 13) % 512; spin > 0; --spin)
        std::atomic_signal_fence(std::memory_order_seq_cst);
      publish(word, sleepers, static_cast<uint32_t>(i + 1));
    }
  });
  for (int i = 0; i < rounds; ++i) {
    const FlagWait flag{&word, static_cast<uint32_t>(i + 1), 1, 0, &sleepers, "publish"};
    const auto start = Clock::now();
    ready.store(i, std::memory_order_release);
    // Announcing anew each round, every third wait has been long: it announces kLongSleeper
    // instead of 1. (Kept announcements stay at 1, as across one wait's sleeps.)
    const bool long_idle = !keep_announced && i % 3 == 2;
    while (!flag.reached()) {
      sleeper.sleep(flag, sleep_timeout_us, long_idle);
      last = long_idle ? kLongSleeper : 1u;
    }
    if (!keep_announced) sleeper.release();  // the next round announces anew, racing the publish
    longest = std::max(longest, Clock::now() - start);
  }
  owner.join();
  EXPECT_EQ(sleepers.load(), keep_announced ? last : 0u);
  sleeper.release();
  EXPECT_EQ(sleepers.load(), 0u);
  EXPECT_EQ(word.load(), static_cast<uint32_t>(rounds));
  return longest;
}

constexpr int kRounds = 20000;
constexpr long kSleepTimeoutUs = 20L * 1000 * 1000;

TEST(FutexWake, FencedPublishWakesEverySleeper) {
  const bool light = light_publish.exchange(false);
  const auto longest = longest_wake(kRounds, kSleepTimeoutUs, false);
  light_publish.store(light);
  // Not a speed check: a missed wake costs the whole 20 s timeout, a woken sleeper far less.
  EXPECT_LT(longest, std::chrono::microseconds(kSleepTimeoutUs / 2));
}

TEST(FutexWake, LightPublishWakesEverySleeper) {
  enable_light_publish();
  if (!light_publish.load()) GTEST_SKIP() << "membarrier(GLOBAL_EXPEDITED) is not available here";
  const auto longest = longest_wake(kRounds, kSleepTimeoutUs, false);
  EXPECT_LT(longest, std::chrono::microseconds(kSleepTimeoutUs / 2));
}

TEST(FutexWake, LightPublishWakesASleeperThatStaysAnnounced) {
  enable_light_publish();
  if (!light_publish.load()) GTEST_SKIP() << "membarrier(GLOBAL_EXPEDITED) is not available here";
  const auto longest = longest_wake(kRounds, kSleepTimeoutUs, true);
  EXPECT_LT(longest, std::chrono::microseconds(kSleepTimeoutUs / 2));
}

}  // namespace
}  // namespace braid::coll
