// The registry of braid-allocated regions and a communicator's registration cache over it:
// each region is registered once, on first use, and deregistered exactly once when it is freed
// or the cache goes away. The reg/dereg callbacks here count calls; the real transport's
// reg_mr/dereg_mr are exercised by the multi-process tests.
#include "memory/region_registry.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "memory/registration_cache.hpp"

namespace braid::detail {
namespace {

struct Calls {
  std::vector<std::pair<void *, size_t>> regs;
  std::vector<void *> deregs;
  uintptr_t next = 0x1000;
};

RegistrationCache make_cache(RegionRegistry &registry, Calls &calls) {
  return RegistrationCache(
      registry,
      [&calls](void *addr, size_t bytes) {
        calls.regs.emplace_back(addr, bytes);
        return reinterpret_cast<void *>(calls.next++);
      },
      [&calls](void *mr) { calls.deregs.push_back(mr); });
}

TEST(RegionRegistry, FindsOnlyRangesWhollyInsideARegion) {
  RegionRegistry registry;
  auto r = registry.allocate(3 * 4096, -1, true);
  ASSERT_TRUE(r);
  EXPECT_EQ(registry.find(r->base, r->bytes)->id, r->id);
  EXPECT_EQ(registry.find(r->base + 100, 200)->base, r->base);
  EXPECT_FALSE(registry.find(r->base + 100, r->bytes));  // runs past the end
  EXPECT_FALSE(registry.find(r->base - 1, 2));           // starts before it
  int on_stack = 0;
  EXPECT_FALSE(registry.find(&on_stack, sizeof on_stack));
  EXPECT_TRUE(registry.release(r->base, true));
  EXPECT_FALSE(registry.find(r->base, 1));
  EXPECT_EQ(registry.count(), 0u);
}

TEST(RegionRegistry, UserFreeRefusesInternalRegionsAndUnknownPointers) {
  RegionRegistry registry;
  auto internal = registry.allocate(4096, -1, false);
  ASSERT_TRUE(internal);
  EXPECT_FALSE(registry.release(internal->base, /*user_only=*/true));
  EXPECT_FALSE(registry.release(internal->base + 8, false));  // not a region's start
  EXPECT_TRUE(registry.release(internal->base, false));
  EXPECT_FALSE(registry.release(internal->base, false));  // already gone
}

TEST(RegistrationCache, RegistersEachRegionOnceOnFirstUse) {
  RegionRegistry registry;
  Calls calls;
  auto a = registry.allocate(1 << 20, -1, true);
  auto b = registry.allocate(4096, -1, true);
  {
    RegistrationCache cache = make_cache(registry, calls);
    EXPECT_TRUE(calls.regs.empty());  // nothing until a send or receive touches a region
    void *mr = cache.lookup(a->base, 4096);
    ASSERT_NE(mr, nullptr);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(cache.lookup(a->base + i * 4096, 4096), mr);
    ASSERT_EQ(calls.regs.size(), 1u);
    EXPECT_EQ(calls.regs[0].first, a->base);  // the whole region, not just the first buffer
    EXPECT_EQ(calls.regs[0].second, a->bytes);
    EXPECT_NE(cache.lookup(b->base, 16), mr);
    EXPECT_EQ(cache.registrations_made(), 2u);
    int heap_like = 0;
    EXPECT_EQ(cache.lookup(&heap_like, sizeof heap_like), nullptr);  // not braid memory
    EXPECT_EQ(calls.regs.size(), 2u);
    EXPECT_TRUE(calls.deregs.empty());
  }
  // The communicator went away: both registrations dropped, the memory stays allocated.
  EXPECT_EQ(calls.deregs.size(), 2u);
  EXPECT_EQ(registry.count(), 2u);
  registry.release(a->base, true);
  registry.release(b->base, true);
  EXPECT_EQ(calls.deregs.size(), 2u);  // nothing more: the cache is gone
}

TEST(RegistrationCache, FreeingARegionDropsItsRegistrationOnce) {
  RegionRegistry registry;
  Calls calls;
  RegistrationCache cache = make_cache(registry, calls);
  auto a = registry.allocate(8192, -1, true);
  void *mr = cache.lookup(a->base, 8192);
  EXPECT_EQ(cache.live(), 1u);
  ASSERT_TRUE(registry.release(a->base, true));
  ASSERT_EQ(calls.deregs.size(), 1u);
  EXPECT_EQ(calls.deregs[0], mr);
  EXPECT_EQ(cache.live(), 0u);
  // A new region (possibly at the same address) gets a fresh registration.
  auto b = registry.allocate(8192, -1, true);
  EXPECT_NE(cache.lookup(b->base, 8192), nullptr);
  EXPECT_EQ(calls.regs.size(), 2u);
  registry.release(b->base, true);
  EXPECT_EQ(calls.deregs.size(), 2u);
}

TEST(RegistrationCache, FailedRegistrationIsNotRetriedAndUsesNoHandle) {
  RegionRegistry registry;
  int attempts = 0;
  int deregs = 0;
  RegistrationCache cache(
      registry,
      [&attempts](void *, size_t) -> void * {
        ++attempts;
        return nullptr;
      },
      [&deregs](void *) { ++deregs; });
  auto a = registry.allocate(4096, -1, true);
  EXPECT_EQ(cache.lookup(a->base, 64), nullptr);
  EXPECT_EQ(cache.lookup(a->base, 64), nullptr);
  EXPECT_EQ(attempts, 1);
  registry.release(a->base, true);
  EXPECT_EQ(deregs, 0);
}

TEST(RegionRegistry, TwoCachesEachHoldTheirOwnRegistration) {
  RegionRegistry registry;
  Calls one, two;
  RegistrationCache c1 = make_cache(registry, one);
  RegistrationCache c2 = make_cache(registry, two);
  auto a = registry.allocate(4096, -1, true);
  c1.lookup(a->base, 1);
  c2.lookup(a->base, 1);
  registry.release(a->base, true);
  EXPECT_EQ(one.deregs.size(), 1u);
  EXPECT_EQ(two.deregs.size(), 1u);
}

}  // namespace
}  // namespace braid::detail
