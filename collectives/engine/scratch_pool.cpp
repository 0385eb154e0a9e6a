#include "engine/scratch_pool.hpp"

#include <algorithm>

#include "error.hpp"
#include "memory/region_registry.hpp"

namespace braid::coll {

ScratchPool::~ScratchPool() {
  for (const Block &b : free_) free_block(b.mem);
  for (const Block &b : held_) free_block(b.mem);
}

void ScratchPool::free_block(char *mem) {
  detail::RegionRegistry::instance().release(mem, false);
}

ScratchPool::Lease ScratchPool::acquire(size_t bytes) {
  // The smallest cached block that fits.
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it)
    if (it->size >= bytes && (best == free_.end() || it->size < best->size)) best = it;
  if (best != free_.end()) {
    Lease lease(this, best->mem, best->size);
    free_.erase(best);
    return lease;
  }
  // Round up so slightly different sizes reuse the same block.
  const size_t granule = 64 * 1024;
  const size_t size = std::max<size_t>(granule, (bytes + granule - 1) / granule * granule);
  auto region = detail::RegionRegistry::instance().allocate(size, node_, false);
  if (!region)
    detail::fail(BRAID_ERR_NO_MEMORY, "cannot map ", size, " bytes of scratch memory on NUMA node ",
                 node_);
  return Lease(this, region->base, size);
}

void ScratchPool::give_back(char *mem, size_t size) {
  if (holding_) {
    held_.push_back({mem, size});
    return;
  }
  free_.push_back({mem, size});
  if (free_.size() > kMaxCached) {
    // Drop the smallest: large blocks are the expensive ones to fault in again.
    auto smallest = std::min_element(
        free_.begin(), free_.end(), [](const Block &a, const Block &b) { return a.size < b.size; });
    free_block(smallest->mem);
    free_.erase(smallest);
  }
}

size_t ScratchPool::cached_bytes() const {
  size_t total = 0;
  for (const Block &b : free_) total += b.size;
  return total;
}

}  // namespace braid::coll
