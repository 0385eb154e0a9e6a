#include "rcache.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <mutex>

#include "mem_monitor.hpp"

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

RegCache::RegCache(ibv_pd *pd, MemMonitor *monitor, Limits limits)
    : pd_(pd), monitor_(monitor), limits_(limits) {
  std::lock_guard<std::mutex> guard(monitor_->mutex());
  monitor_->subscribe(this, &RegCache::on_invalidate, &RegCache::covers);
}

RegCache::~RegCache() {
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    monitor_->unsubscribe(this);
    while (!live_.empty()) drop(live_.size() - 1, true);
  }
  MemMonitor::release(monitor_);
}

void RegCache::on_invalidate(void *self, uintptr_t start, uintptr_t end) {
  auto *cache = static_cast<RegCache *>(self);
  for (size_t i = cache->live_.size(); i-- > 0;) {
    CachedReg *e = cache->live_[i];
    if (e->start < end && start < e->end) {
      ++cache->stats_.invalidated;
      cache->drop(i, false);  // the monitor already stopped watching what it had to
    }
  }
}

bool RegCache::covers(void *self, uintptr_t start, uintptr_t end) {
  for (const CachedReg *e : static_cast<RegCache *>(self)->live_)
    if (e->start < end && start < e->end) return true;
  return false;
}

void RegCache::drop(size_t index, bool unwatch) {
  CachedReg *e = live_[index];
  live_[index] = live_.back();
  live_.pop_back();
  bytes_ -= e->end - e->start;
  // Watched ranges split the mapping's VMAs: unwatched again once no entry of any cache needs
  // them, or a long run caching many distinct buffers would reach vm.max_map_count.
  if (unwatch) monitor_->unwatch_unused(e->start, e->end);
  if (e->refs > 0) {
    e->stale = true;  // a rendezvous still uses it: its last release deregisters it
    return;
  }
  ibv_dereg_mr(e->mr);
  delete e;
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
    drop(oldest, true);
  }
}

CachedReg *RegCache::acquire(void *addr, size_t bytes) {
  const uintptr_t page = page_size();
  const uintptr_t start = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(addr) + (bytes == 0 ? 1 : bytes) + page - 1) & ~(page - 1);
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    for (CachedReg *e : live_) {
      if (e->start <= start && end <= e->end) {
        ++e->refs;
        e->last_use = ++clock_;
        ++stats_.hits;
        return e;
      }
    }
    ++stats_.misses;
    if (end - start > limits_.max_bytes) {
      ++stats_.uncacheable;
      return nullptr;
    }
  }
  // Registered outside the lock: ibv_reg_mr faults pages in, and a fault on a watched page waits
  // for the monitor thread, which takes the lock to read it.
  ibv_mr *mr = ibv_reg_mr(pd_, reinterpret_cast<void *>(start), end - start, kAccess);
  if (mr == nullptr && locked_memory_short(errno)) {
    {
      std::lock_guard<std::mutex> guard(monitor_->mutex());
      evict_idle(SIZE_MAX, 0);
    }
    mr = ibv_reg_mr(pd_, reinterpret_cast<void *>(start), end - start, kAccess);
  }
  std::lock_guard<std::mutex> guard(monitor_->mutex());
  if (mr == nullptr || !monitor_->watch(start, end)) {
    if (mr != nullptr) ibv_dereg_mr(mr);
    ++stats_.uncacheable;
    return nullptr;
  }
  evict_idle(1, end - start);
  auto *e = new CachedReg;
  e->cache = this;
  e->start = start;
  e->end = end;
  e->mr = mr;
  e->refs = 1;
  e->last_use = ++clock_;
  live_.push_back(e);
  bytes_ += end - start;
  return e;
}

void RegCache::release(CachedReg *e) {
  RegCache *cache = e->cache;
  std::lock_guard<std::mutex> guard(cache->monitor_->mutex());
  if (--e->refs > 0 || !e->stale) return;
  ibv_dereg_mr(e->mr);
  delete e;
}

RegCacheStats RegCache::stats() {
  std::lock_guard<std::mutex> guard(monitor_->mutex());
  RegCacheStats s = stats_;
  s.entries = live_.size();
  s.bytes = bytes_;
  return s;
}

}  // namespace braid::verbs
