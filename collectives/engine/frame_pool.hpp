// Coroutine frames of the engine's Tasks, recycled per thread. Every collective call runs a
// chain of coroutines (the algorithm and the steps it awaits: a node-path allgather by single
// copy is seven frames), and each frame was a malloc and a free: about 1,340 instructions an
// iteration of a 2-rank 32 KiB allgather and its barrier (callgrind), much of it in glibc's
// slower _int_free (frames are often larger than its per-thread cache takes); about 760 with
// this pool. A frame freed here is kept on a short list of its size class for the thread's next
// call of the same shape.
//
// Per thread, so no lock: a frame may be freed on another thread than the one that made it
// (a non-blocking call completed by a wait elsewhere); it then joins that thread's lists.
// Under AddressSanitizer every frame goes to the global allocator, so that a use after free
// of a frame is still reported.
#pragma once

#include <cstddef>

namespace braid::coll::frame_pool {

// Whether frames are kept at all (not under AddressSanitizer).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kKeepsFrames = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kKeepsFrames = false;
#else
inline constexpr bool kKeepsFrames = true;
#endif
#else
inline constexpr bool kKeepsFrames = true;
#endif

void *allocate(std::size_t bytes);
void release(void *frame, std::size_t bytes) noexcept;

// The same recycling for the other object every call makes, its Collective (allocate_shared).
template <class T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <class U>
  Allocator(const Allocator<U> &) noexcept {}
  T *allocate(std::size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "frames are new's alignment");
    return static_cast<T *>(frame_pool::allocate(n * sizeof(T)));
  }
  void deallocate(T *p, std::size_t n) noexcept { frame_pool::release(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const Allocator<U> &) const noexcept {
    return true;
  }
};

}  // namespace braid::coll::frame_pool
