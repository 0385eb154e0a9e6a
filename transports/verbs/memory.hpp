// Registered memory: arenas of receive and bounce buffers (allocated on the NUMA node the core
// chose, registered once for the context's lifetime) and registrations made for a single
// rendezvous.
//
// Why no address-keyed cache of user buffers: a registration pins the pages that were mapped
// when it was made. If the application frees a buffer and a later allocation reuses the address,
// a cached registration still points at the old pages and RDMA would silently move the wrong
// bytes. Catching that needs to intercept munmap inside the C library (UCX patches relocation
// tables to do so); braid does not. It caches only memory whose lifetime it sees: its own
// arenas and application memory registered through reg_mr (braid_mem_alloc), which braid
// deregisters before the memory is freed. Other user buffers are registered per rendezvous,
// which also means their rkey is valid only while that rendezvous is in flight.
#pragma once

#include <cstddef>
#include <string>

#include "context.hpp"

namespace braid::verbs {

int arena_create(Context *ctx, size_t bytes, int access, const char *what, Arena *out);
void arena_destroy(Context *ctx, Arena *arena);

// Registers [addr, addr+bytes) for one operation with the narrowest access it needs.
int register_transient(Context *ctx, void *addr, size_t bytes, int access, int peer,
                       const char *what, ibv_mr **out);

// What to tell a user whose registration failed (memlock limit and how to raise it).
std::string registration_hint(int err, size_t bytes);

}  // namespace braid::verbs
