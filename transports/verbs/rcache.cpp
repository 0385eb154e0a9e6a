#include "rcache.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <mutex>

#include "mem_monitor.hpp"
#include "proc_maps.hpp"

namespace braid::verbs {
namespace {

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;

uintptr_t page_size() {
  static const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return size;
}

bool locked_memory_short(int err) {
  return err == ENOMEM || err == EAGAIN || err == EPERM;
}

}  // namespace

RegCache::RegCache(ibv_pd *pd, MemMonitor *monitor, Limits limits, bool remote_write)
    : pd_(pd),
      monitor_(monitor),
      limits_(limits),
      access_(kAccess | (remote_write ? IBV_ACCESS_REMOTE_WRITE : 0)),
      live_capacity_(2 * limits.max_entries) {
  live_.reserve(live_capacity_);
  std::lock_guard<std::mutex> guard(monitor_->mutex());
  monitor_->subscribe(this, &RegCache::on_invalidate, &RegCache::covers);
}

RegCache::~RegCache() {
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    monitor_->unsubscribe(this);
    while (!live_.empty()) drop(live_.size() - 1);
  }
  reap();
  MemMonitor::release(monitor_);
}

void RegCache::on_invalidate(void *self, uintptr_t start, uintptr_t end) {
  auto *cache = static_cast<RegCache *>(self);
  for (size_t i = cache->live_.size(); i-- > 0;) {
    CachedReg *e = cache->live_[i];
    if (e->start < end && start < e->end) {
      ++cache->stats_.invalidated;
      cache->drop(i);
    }
  }
}

bool RegCache::covers(void *self, uintptr_t start, uintptr_t end, uintptr_t *first,
                      uintptr_t *last) {
  bool any = false;
  for (const CachedReg *e : static_cast<RegCache *>(self)->live_) {
    if (!(e->start < end && start < e->end)) continue;
    const uintptr_t f = std::max(e->start, start), l = std::min(e->end, end);
    if (!any || f < *first || (f == *first && l > *last)) {
      *first = f;
      *last = l;
    }
    any = true;
  }
  return any;
}

void RegCache::drop(size_t index) {
  CachedReg *e = live_[index];
  live_[index] = live_.back();
  live_.pop_back();
  bytes_ -= e->end - e->start;
  // Watched ranges split the mapping's VMAs: unwatched again once no entry of any cache needs
  // them (also what is left of an entry after a partial unmap), or a long run caching many
  // distinct buffers would reach vm.max_map_count.
  monitor_->unwatch_unused(e->start, e->end);
  if (e->refs > 0) {
    e->stale = true;  // a rendezvous still uses it: its last release deregisters it
    return;
  }
  e->next_dead = dead_;
  dead_ = e;
}

void RegCache::reap() {
  CachedReg *list;
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    list = take_dead();
  }
  free_dead(list);
}

CachedReg *RegCache::take_dead() {
  CachedReg *list = dead_;
  dead_ = nullptr;
  return list;
}

void RegCache::free_dead(CachedReg *list) {
  while (list != nullptr) {
    CachedReg *next = list->next_dead;
    ibv_dereg_mr(list->mr);
    delete list;
    list = next;
  }
}

void RegCache::evict_idle(size_t entries, size_t bytes) {
  for (;;) {
    bool fits = entries != SIZE_MAX && live_.size() + entries <= limits_.max_entries &&
                bytes_ + bytes <= limits_.max_bytes;
    if (fits) return;
    size_t oldest = SIZE_MAX;
    for (size_t i = 0; i < live_.size(); ++i)
      if (live_[i]->refs == 0 &&
          (oldest == SIZE_MAX || live_[i]->last_use < live_[oldest]->last_use))
        oldest = i;
    if (oldest == SIZE_MAX) return;  // everything is in use: go over the limit for now
    ++stats_.evicted;
    drop(oldest);
  }
}

CachedReg *RegCache::acquire(void *addr, size_t bytes) {
  const uintptr_t page = page_size();
  const uintptr_t start = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(addr) + (bytes == 0 ? 1 : bytes) + page - 1) & ~(page - 1);
  // One lock for the lookup and for taking what the monitor dropped meanwhile (freed after it).
  CachedReg *dead;
  CachedReg *hit = nullptr;
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    dead = take_dead();
    for (CachedReg *e : live_) {
      if (e->start <= start && end <= e->end) {
        ++e->refs;
        e->last_use = ++clock_;
        ++stats_.hits;
        hit = e;
        break;
      }
    }
    if (hit == nullptr) ++stats_.misses;
  }
  free_dead(dead);
  if (hit != nullptr) return hit;
  if (end - start > limits_.max_bytes || !private_anonymous(start, end)) {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    ++stats_.uncacheable;
    return nullptr;
  }
  // Registered outside the lock: ibv_reg_mr faults pages in, and a fault on a watched page waits
  // for the monitor thread, which takes the lock to read it.
  fault_in_for_pinning(reinterpret_cast<void *>(start), end - start);
  ibv_mr *mr = ibv_reg_mr(pd_, reinterpret_cast<void *>(start), end - start, access_);
  if (mr == nullptr && locked_memory_short(errno)) {
    {
      std::lock_guard<std::mutex> guard(monitor_->mutex());
      evict_idle(SIZE_MAX, 0);
    }
    reap();
    mr = ibv_reg_mr(pd_, reinterpret_cast<void *>(start), end - start, access_);
  }
  auto *e = mr != nullptr ? new CachedReg : nullptr;  // allocated outside the lock
  bool cached = false;
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    if (e != nullptr && live_.size() < live_capacity_ && monitor_->watch(start, end)) {
      e->cache = this;
      e->start = start;
      e->end = end;
      e->mr = mr;
      e->refs = 1;  // in live_ before evicting, so eviction keeps its pages watched
      e->last_use = ++clock_;
      live_.push_back(e);
      bytes_ += end - start;
      evict_idle(0, 0);
      cached = true;
    } else {
      ++stats_.uncacheable;
    }
    dead = take_dead();
  }
  free_dead(dead);
  if (cached) return e;
  if (mr != nullptr) ibv_dereg_mr(mr);
  delete e;
  return nullptr;
}

void RegCache::release(CachedReg *e, bool revoke) {
  RegCache *cache = e->cache;
  bool free_it = false;
  {
    std::lock_guard<std::mutex> guard(cache->monitor_->mutex());
    if (revoke && !e->stale) {
      for (size_t i = 0; i < cache->live_.size(); ++i)
        if (cache->live_[i] == e) {
          cache->drop(i);  // refs > 0 still: marked stale, freed below on the last release
          break;
        }
    }
    free_it = --e->refs == 0 && e->stale;
  }
  if (free_it) {
    ibv_dereg_mr(e->mr);
    delete e;
  }
}

RegCacheStats RegCache::stats() {
  std::lock_guard<std::mutex> guard(monitor_->mutex());
  RegCacheStats s = stats_;
  s.entries = live_.size();
  s.bytes = bytes_;
  return s;
}

}  // namespace braid::verbs
