#include "engine/frame_pool.hpp"

#include <cstdint>
#include <new>

namespace braid::coll::frame_pool {
namespace {

// Size classes of 64 bytes up to 4 KiB (the largest frames seen are 1-2 KiB); a few frames of
// each kept, enough for the calls of one thread's few communicators.
constexpr std::size_t kGranule = 64;
constexpr std::size_t kClasses = 64;
constexpr std::uint8_t kKeep = 8;

struct FreeFrame {
  FreeFrame *next;
};

// Trivially destructible, so it stays usable after the thread's destructors ran (a frame freed
// by a later destructor, or at process exit, then goes to the global allocator).
struct Lists {
  FreeFrame *head[kClasses];
  std::uint8_t count[kClasses];
  bool keeping;  // the thread's Reaper exists and has not run: frames may be kept
  bool ended;    // the Reaper ran: the thread is ending, nothing is kept any more
};
thread_local Lists t_lists{};

// Gives the kept frames back when the thread ends.
struct Reaper {
  ~Reaper() {
    Lists &l = t_lists;
    l.keeping = false;
    l.ended = true;
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (FreeFrame *f = l.head[c]) {
        l.head[c] = f->next;
        ::operator delete(f);
      }
      l.count[c] = 0;
    }
  }
};

std::size_t class_of(std::size_t bytes) {
  return bytes == 0 ? 0 : (bytes - 1) / kGranule;
}

}  // namespace

void *allocate(std::size_t bytes) {
  const std::size_t c = class_of(bytes);
  if (!kKeepsFrames || c >= kClasses) return ::operator new(bytes);
  Lists &l = t_lists;
  if (FreeFrame *f = l.head[c]) {
    l.head[c] = f->next;
    --l.count[c];
    return f;
  }
  if (!l.keeping && !l.ended) {
    // This thread's first frame: its lists are emptied when it ends (the Reaper). Done here and
    // not in release, which then has no call on its path.
    static thread_local Reaper reaper;
    (void)reaper;
    l.keeping = true;
  }
  return ::operator new((c + 1) * kGranule);  // the class's size: any frame of it may reuse it
}

void release(void *frame, std::size_t bytes) noexcept {
  const std::size_t c = class_of(bytes);
  if (!kKeepsFrames || c >= kClasses) {
    ::operator delete(frame);
    return;
  }
  Lists &l = t_lists;
  // A thread that never allocated a frame (or has ended) keeps none.
  if (!l.keeping || l.count[c] >= kKeep) {
    ::operator delete(frame);
    return;
  }
  auto *f = static_cast<FreeFrame *>(frame);
  f->next = l.head[c];
  l.head[c] = f;
  ++l.count[c];
}

}  // namespace braid::coll::frame_pool
