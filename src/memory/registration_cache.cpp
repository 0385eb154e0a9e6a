#include "memory/registration_cache.hpp"

namespace braid::detail {

RegistrationCache::RegistrationCache(RegionRegistry &registry, Reg reg, Dereg dereg)
    : registry_(registry), reg_(std::move(reg)), dereg_(std::move(dereg)) {
  token_ = registry_.subscribe([this](const Region &r) { forget(r); });
}

RegistrationCache::~RegistrationCache() {
  registry_.unsubscribe(token_);
  std::lock_guard lock(mutex_);
  for (auto &[id, mr] : mrs_)
    if (mr != nullptr) dereg_(mr);
  mrs_.clear();
}

void *RegistrationCache::lookup(const void *buf, size_t bytes) {
  std::optional<Region> region = registry_.find(buf, bytes);
  if (!region) return nullptr;
  std::lock_guard lock(mutex_);
  auto it = mrs_.find(region->id);
  if (it != mrs_.end()) return it->second;
  // The whole region, not just this buffer: later calls anywhere inside it reuse it.
  void *mr = reg_(region->base, region->bytes);
  ++made_;
  mrs_.emplace(region->id, mr);
  return mr;
}

size_t RegistrationCache::live() const {
  std::lock_guard lock(mutex_);
  return mrs_.size();
}

void RegistrationCache::forget(const Region &region) {
  std::lock_guard lock(mutex_);
  auto it = mrs_.find(region.id);
  if (it == mrs_.end()) return;
  if (it->second != nullptr) dereg_(it->second);
  mrs_.erase(it);
}

}  // namespace braid::detail
