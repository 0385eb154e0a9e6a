#include "memory/region_registry.hpp"

#include "memory/node_memory.hpp"

namespace braid::detail {

RegionRegistry &RegionRegistry::instance() {
  // Never destroyed: regions may be freed from static destructors after main returns.
  static RegionRegistry *registry = new RegionRegistry;
  return *registry;
}

std::optional<Region> RegionRegistry::allocate(size_t bytes, int node, bool user) {
  int fd = -1;
  void *p = user ? alloc_shared_on_node(bytes, node, &fd) : alloc_on_node(bytes, node);
  if (p == nullptr) return std::nullopt;
  std::lock_guard lock(mutex_);
  Region &r = regions_[reinterpret_cast<uintptr_t>(p)];
  r = Region{static_cast<char *>(p), bytes, node, user, next_id_++, fd};
  return r;
}

bool RegionRegistry::release(void *base, bool user_only) {
  Region r;
  {
    std::lock_guard lock(mutex_);
    auto it = regions_.find(reinterpret_cast<uintptr_t>(base));
    if (it == regions_.end() || (user_only && !it->second.user)) return false;
    r = it->second;
    for (auto &[token, listener] : listeners_) listener(r);
    regions_.erase(it);
  }
  free_shared_on_node(r.base, r.bytes, r.fd);
  return true;
}

std::optional<Region> RegionRegistry::find(const void *addr, size_t bytes) const {
  const auto a = reinterpret_cast<uintptr_t>(addr);
  std::lock_guard lock(mutex_);
  auto it = regions_.upper_bound(a);  // first region starting after addr
  if (it == regions_.begin()) return std::nullopt;
  --it;
  const Region &r = it->second;
  if (a + bytes < a || a + bytes > it->first + r.bytes) return std::nullopt;
  return r;
}

std::optional<Region> RegionRegistry::at(const void *base) const {
  std::lock_guard lock(mutex_);
  auto it = regions_.find(reinterpret_cast<uintptr_t>(base));
  if (it == regions_.end()) return std::nullopt;
  return it->second;
}

size_t RegionRegistry::count() const {
  std::lock_guard lock(mutex_);
  return regions_.size();
}

uint64_t RegionRegistry::subscribe(Listener listener) {
  std::lock_guard lock(mutex_);
  const uint64_t token = next_id_++;
  listeners_.emplace(token, std::move(listener));
  return token;
}

void RegionRegistry::unsubscribe(uint64_t token) {
  std::lock_guard lock(mutex_);
  listeners_.erase(token);
}

}  // namespace braid::detail
