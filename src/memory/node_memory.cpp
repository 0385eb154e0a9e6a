#include "memory/node_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "log.hpp"
#include "memory/topology.hpp"

namespace braid::detail {
namespace {

size_t page_rounded(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

std::atomic<bool> g_bind_warned{false};

// Binds [p, p + len) to `node`; a failure is reported once and leaves the memory unbound.
void bind_to_node(void *p, size_t len, int node) noexcept {
  if (node < 0) return;
  try {
    const Topology &topo = Topology::get();
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_only(set, static_cast<unsigned>(node));
    // BIND (MPOL_BIND), not "preferred": a buffer asked for on node 1 must not quietly land on
    // node 0; STRICT makes hwloc report a failure instead of ignoring it.
    const int rc = hwloc_set_area_membind(topo.handle(), p, len, set, HWLOC_MEMBIND_BIND,
                                          HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT);
    const int err = errno;
    hwloc_bitmap_free(set);
    if (rc != 0 && !g_bind_warned.exchange(true))
      log(topo.is_this_system() ? LogLevel::warn : LogLevel::info,
          "cannot bind memory to NUMA node ", node, " (",
          topo.is_this_system() ? std::strerror(err) : "the topology is replayed from XML",
          "); buffers are left to the kernel's first-touch placement");
  } catch (const Failure &f) {
    if (!g_bind_warned.exchange(true)) log(LogLevel::warn, "memory not bound: ", f.message());
  }
}

}  // namespace

void bind_area_to_node(void *p, size_t bytes, int node) noexcept {
  bind_to_node(p, page_rounded(bytes), node);
}

void *alloc_on_node(size_t bytes, int node) noexcept {
  const size_t len = page_rounded(bytes == 0 ? 1 : bytes);
  void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  bind_to_node(p, len, node);
  return p;
}

void *alloc_shared_on_node(size_t bytes, int node, int *fd) noexcept {
  *fd = -1;
  const size_t len = page_rounded(bytes == 0 ? 1 : bytes);
  const int f = memfd_create("braid_mem", MFD_CLOEXEC);
  if (f < 0) return alloc_on_node(bytes, node);  // e.g. a seccomp filter: private memory
  if (ftruncate(f, static_cast<off_t>(len)) != 0) {
    close(f);
    return nullptr;
  }
  void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  if (p == MAP_FAILED) {
    close(f);
    return nullptr;
  }
  // On a shared mapping mbind sets the file's own policy, so the pages land on `node` whoever
  // touches them first, this rank or a peer that mapped the file.
  bind_to_node(p, len, node);
  *fd = f;
  return p;
}

void free_shared_on_node(void *ptr, size_t bytes, int fd) noexcept {
  free_on_node(ptr, bytes);
  if (fd >= 0) close(fd);
}

void free_on_node(void *ptr, size_t bytes) noexcept {
  if (ptr != nullptr) munmap(ptr, page_rounded(bytes == 0 ? 1 : bytes));
}

int current_cpu_node() noexcept {
  try {
    const Topology &topo = Topology::get();
    const int cpu = sched_getcpu();
    if (cpu < 0) return -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_only(set, static_cast<unsigned>(cpu));
    const int node = topo.node_of_cpus(set);
    hwloc_bitmap_free(set);
    return node;
  } catch (const Failure &) {
    return -1;
  }
}

}  // namespace braid::detail
