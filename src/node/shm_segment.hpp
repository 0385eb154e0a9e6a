// A mapping of node-local shared memory (node_pool.hpp creates and opens the file). Its name
// lives in /dev/shm only between creation and the moment every rank of the node has opened it:
// then it is unlinked, so the kernel frees the memory when the last rank unmaps it or dies, and
// nothing leaks.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace braid::detail {

class ShmSegment {
 public:
  ShmSegment() = default;
  ShmSegment(char *base, size_t bytes) : base_(base), bytes_(bytes) {}
  ShmSegment(ShmSegment &&o) noexcept
      : base_(std::exchange(o.base_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  ShmSegment &operator=(ShmSegment &&o) noexcept;
  ShmSegment(const ShmSegment &) = delete;
  ShmSegment &operator=(const ShmSegment &) = delete;
  ~ShmSegment();

  char *data() const { return base_; }
  size_t size() const { return bytes_; }

 private:
  char *base_ = nullptr;
  size_t bytes_ = 0;
};

// A name unique to the job (its key), the segment's use (`comm`) and the node (its leader's rank
// and pid).
std::string segment_name(const std::string &job_key, const char *comm, int leader_rank,
                         int leader_pid);
void unlink_segment(const std::string &name) noexcept;

}  // namespace braid::detail
