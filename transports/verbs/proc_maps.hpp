// Looks up the mappings of this process in /proc/self/maps without allocating: the registration
// cache asks it on the monitor thread and under the monitor's lock, where an allocation could
// make the C library return memory with munmap or madvise, which would wait for that very
// thread (see mem_monitor.hpp).
#pragma once

#include <cstdint>

namespace braid::verbs {

struct Mapping {
  uintptr_t start = 0, end = 0;
  bool private_anonymous = false;  // MAP_PRIVATE, no file or shared-memory object behind it
};

// The mapping containing `addr`; false when none does (or /proc cannot be read).
bool mapping_at(uintptr_t addr, Mapping *out);

// Whether every page of [start, end) lies in private anonymous mappings (heap, anonymous mmap,
// thread stacks; not the main thread's stack, which grows). Only such memory changes its pages
// solely through this process's own calls, which the monitor sees; shared memory can lose its pages
// to another process's truncate or hole punch.
bool private_anonymous(uintptr_t start, uintptr_t end);

}  // namespace braid::verbs
