#include "kernels/stream_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace braid::coll {

void copy_streaming(void *dst, const void *src, size_t bytes) {
  auto *d = static_cast<char *>(dst);
  const auto *s = static_cast<const char *>(src);
#if defined(__x86_64__)
  // Streaming stores need 16-byte aligned destinations: the head up to the first such address
  // goes by memcpy, and so does the tail past the last whole 64-byte line.
  const size_t head = std::min<size_t>((16 - reinterpret_cast<uintptr_t>(d) % 16) % 16, bytes);
  std::memcpy(d, s, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 48), e);
  }
  // Streaming stores are weakly ordered: without the fence a later release store (a `done`
  // flag) could become visible before them.
  _mm_sfence();
  std::memcpy(d + i, s + i, bytes - i);
#else
  std::memcpy(d, s, bytes);
#endif
}

}  // namespace braid::coll
