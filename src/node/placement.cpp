#include "node/placement.hpp"

#include <unistd.h>

#include "memory/node_memory.hpp"

namespace braid::detail {

void place_near_this_rank(void *p, size_t bytes, int numa_node) {
  bind_area_to_node(p, bytes, numa_node);
  const long page = sysconf(_SC_PAGESIZE);
  const size_t step = page > 0 ? static_cast<size_t>(page) : 4096;
  auto *c = static_cast<volatile char *>(p);
  for (size_t off = 0; off < bytes; off += step) c[off] = 0;
}

void read_every_page(const void *p, size_t bytes) {
  const long page = sysconf(_SC_PAGESIZE);
  const size_t step = page > 0 ? static_cast<size_t>(page) : 4096;
  const auto *c = static_cast<const volatile char *>(p);
  for (size_t off = 0; off < bytes; off += step) static_cast<void>(c[off]);
}

}  // namespace braid::detail
