// Registered memory: arenas of receive and bounce buffers (allocated on the NUMA node the core
// chose, registered once for the context's lifetime) and registrations made for a single
// rendezvous, which serve where the registration cache (rcache.hpp) is off or cannot take the
// memory. Their rkey is valid only while that rendezvous is in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "context.hpp"

namespace braid::verbs {

int arena_create(Context *ctx, size_t bytes, int access, const char *what, Arena *out);
void arena_destroy(Context *ctx, Arena *arena);

// Registers [addr, addr+bytes) for one operation with the narrowest access it needs.
int register_transient(Context *ctx, void *addr, size_t bytes, int access, int peer,
                       const char *what, ibv_mr **out);

// Whether `mr` (may be null) covers [buf, buf+bytes).
inline bool covers(const ibv_mr *mr, const void *buf, size_t bytes) {
  if (mr == nullptr) return false;
  auto *base = static_cast<const uint8_t *>(mr->addr);
  auto *p = static_cast<const uint8_t *>(buf);
  return p >= base && p + bytes <= base + mr->length;
}

// What to tell a user whose registration failed (memlock limit and how to raise it).
std::string registration_hint(int err, size_t bytes);

}  // namespace braid::verbs
