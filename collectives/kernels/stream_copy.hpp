// A copy whose stores bypass the cache (non-temporal), for large copies into a buffer that will
// have left the cache before anyone reads it again.
//
// An ordinary store first reads the line it writes (read for ownership): a copy that misses the
// cache moves three bytes of memory traffic per byte copied, a streaming one two. glibc's memcpy
// switches to streaming stores itself only above x86_non_temporal_threshold, 3/4 of the shared
// cache it reads from CPUID: on the 2-core EPYC VM, whose guest sees 32 MiB of L3 (hwloc, sysfs)
// while CPUID reports 256 MiB, that is 192 MiB, so every copy of a collective goes through the
// cache (memcpy of 16-64 MiB 7-9 GB/s there, streamed 11-14 GB/s). The caller decides when the
// data would not stay cached (NodeChannel::streams); below that, streaming stores lose (they
// also evict the destination: 2-rank allgather, 512 KiB-2 MiB, 7-17% slower).
#pragma once

#include <cstddef>
#include <cstring>

namespace braid::coll {

// Copies `bytes` from `src` to `dst` (not overlapping) with streaming stores where the CPU has
// them (x86-64: SSE2), else memcpy. Ordered before any later store (a store fence), so a flag
// published after it is seen after the data.
void copy_streaming(void *dst, const void *src, size_t bytes);

// Into a collective's result: streamed where `streaming` (NodeChannel::streams), else memcpy.
inline void copy_result(void *dst, const void *src, size_t bytes, bool streaming) {
  if (streaming)
    copy_streaming(dst, src, bytes);
  else
    std::memcpy(dst, src, bytes);
}

}  // namespace braid::coll
