#include "node/placement.hpp"

#include <unistd.h>

#include "memory/node_memory.hpp"

namespace braid::detail {

namespace {

size_t page_bytes() {
  const long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<size_t>(page) : 4096;
}

}  // namespace

void place_near_this_rank(void *p, size_t bytes, int numa_node) {
  bind_area_to_node(p, bytes, numa_node);
  auto *c = static_cast<volatile char *>(p);
  const size_t step = page_bytes();
  for (size_t off = 0; off < bytes; off += step) c[off] = 0;
}

void read_every_page(const void *p, size_t bytes) {
  const auto *c = static_cast<const volatile char *>(p);
  const size_t step = page_bytes();
  for (size_t off = 0; off < bytes; off += step) static_cast<void>(c[off]);
}

}  // namespace braid::detail
