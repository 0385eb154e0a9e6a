// A node-local shared-memory segment (POSIX shm_open + mmap). The name lives in /dev/shm only
// between creation and the moment every rank of the node has mapped it: then it is unlinked, so
// the kernel frees the memory when the last rank unmaps it or dies, and nothing leaks.
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

// A name unique to the job (its key), the communicator and the node (its leader's rank and pid).
std::string segment_name(const std::string &job_key, const char *comm, int leader_rank,
                         int leader_pid);
// The leader: creates the segment (failing if the name exists), sizes it and maps it. Returns
// false and says why in *why when it cannot.
bool create_segment(const std::string &name, size_t bytes, ShmSegment *out, std::string *why);
// The other ranks of the node: map the segment the leader created.
bool open_segment(const std::string &name, size_t bytes, ShmSegment *out, std::string *why);
void unlink_segment(const std::string &name) noexcept;

}  // namespace braid::detail
