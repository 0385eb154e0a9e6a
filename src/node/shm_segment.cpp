#include "node/shm_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "error.hpp"
#include "node/fnv1a.hpp"

namespace braid::detail {
namespace {

bool map_fd(int fd, size_t bytes, ShmSegment *out, std::string *why) {
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    *why = cat("mmap of ", bytes, " bytes: ", std::strerror(errno));
    return false;
  }
  *out = ShmSegment(static_cast<char *>(p), bytes);
  return true;
}

}  // namespace

ShmSegment &ShmSegment::operator=(ShmSegment &&o) noexcept {
  if (this != &o) {
    if (base_ != nullptr) munmap(base_, bytes_);
    base_ = std::exchange(o.base_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

std::string segment_name(const std::string &job_key, const char *comm, int leader_rank,
                         int leader_pid) {
  // A hash of the key: the key itself is a secret and may hold any byte.
  const uint64_t h = fnv1a(job_key);
  char buf[96];
  std::snprintf(buf, sizeof buf, "/braid-%016llx-%s-%d-%d", static_cast<unsigned long long>(h),
                comm, leader_rank, leader_pid);
  return buf;
}

bool create_segment(const std::string &name, size_t bytes, ShmSegment *out, std::string *why) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    *why = cat("shm_open(", name, ", O_CREAT|O_EXCL): ", std::strerror(errno));
    return false;
  }
  bool ok = true;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    *why = cat("ftruncate(", name, ", ", bytes, "): ", std::strerror(errno));
    ok = false;
  }
  ok = ok && map_fd(fd, bytes, out, why);
  close(fd);
  if (!ok) shm_unlink(name.c_str());
  return ok;
}

bool open_segment(const std::string &name, size_t bytes, ShmSegment *out, std::string *why) {
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) {
    *why = cat("shm_open(", name, "): ", std::strerror(errno));
    return false;
  }
  bool ok = map_fd(fd, bytes, out, why);
  close(fd);
  return ok;
}

void unlink_segment(const std::string &name) noexcept {
  shm_unlink(name.c_str());
}

}  // namespace braid::detail
