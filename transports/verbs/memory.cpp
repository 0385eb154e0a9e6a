#include "memory.hpp"
#include "mem_monitor.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace braid::verbs {

std::string registration_hint(int err, size_t bytes) {
  std::string text = std::strerror(err);
  if (err == ENOMEM || err == EPERM || err == EAGAIN) {
    rlimit lim{};
    if (getrlimit(RLIMIT_MEMLOCK, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
      text += "; the locked-memory limit (RLIMIT_MEMLOCK) is " +
              std::to_string(lim.rlim_cur / 1024) + " KiB and " + std::to_string(bytes / 1024) +
              " KiB more were asked for: raise it with `ulimit -l unlimited` (or memlock in "
              "/etc/security/limits.conf, LimitMEMLOCK= for systemd services), or shrink "
              "BRAID_VERBS_RECV_QUEUES";
    }
  }
  return text;
}

int arena_create(Context *ctx, size_t bytes, int access, const char *what, Arena *out) {
  *out = Arena{};
  size_t page = 4096;
  size_t rounded = (bytes + page - 1) / page * page;
  void *base = nullptr;
  if (ctx->alloc_on_node != nullptr) base = ctx->alloc_on_node(rounded, ctx->numa_node);
  if (base == nullptr) {
    base = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
      return ctx->error(BRAID_ERR_NO_MEMORY, "verbs: rank %d: cannot allocate %zu bytes of %s: %s",
                        ctx->rank, rounded, what, std::strerror(errno));
  } else {
    out->numa_bound = true;
  }
  ibv_mr *mr = ibv_reg_mr(ctx->pd, base, rounded, access);
  if (mr == nullptr) {
    int e = errno;
    if (out->numa_bound)
      ctx->free_on_node(base, rounded);
    else
      munmap(base, rounded);
    return ctx->error(BRAID_ERR_TRANSPORT,
                      "verbs: rank %d: ibv_reg_mr of %zu bytes of %s on %s: %s", ctx->rank, rounded,
                      what, ctx->device_name.c_str(), registration_hint(e, rounded).c_str());
  }
  out->base = static_cast<uint8_t *>(base);
  out->bytes = rounded;
  out->mr = mr;
  return BRAID_SUCCESS;
}

void arena_destroy(Context *ctx, Arena *arena) {
  if (arena->mr != nullptr) ibv_dereg_mr(arena->mr);
  if (arena->base != nullptr) {
    if (arena->numa_bound)
      ctx->free_on_node(arena->base, arena->bytes);
    else
      munmap(arena->base, arena->bytes);
  }
  *arena = Arena{};
}

int register_transient(Context *ctx, void *addr, size_t bytes, int access, int peer,
                       const char *what, ibv_mr **out) {
  // With the cache on, the range may lie in a watched mapping (mem_monitor.hpp says why that
  // must be faulted in first).
  if (ctx->rcache != nullptr) fault_in_for_pinning(addr, bytes == 0 ? 1 : bytes);
  // A zero-length registration is refused by some providers; register one byte instead.
  ibv_mr *mr = ibv_reg_mr(ctx->pd, addr, bytes == 0 ? 1 : bytes, access);
  if (mr == nullptr) {
    int e = errno;
    return ctx->error(BRAID_ERR_TRANSPORT,
                      "verbs: rank %d: registering %zu bytes at %p for %s with rank %d: %s",
                      ctx->rank, bytes, addr, what, peer, registration_hint(e, bytes).c_str());
  }
  ++ctx->counters.transient_regs;
  *out = mr;
  return BRAID_SUCCESS;
}

}  // namespace braid::verbs
