#include "node/shm_name.hpp"

#include <sys/mman.h>  // shm_unlink

#include <cstdint>
#include <cstdio>

#include "node/fnv1a.hpp"

namespace braid::detail {

std::string segment_name(const std::string &job_key, const char *comm, int leader_rank,
                         int leader_pid) {
  // A hash of the key: the key itself is a secret and may hold any byte.
  const uint64_t h = fnv1a(job_key);
  char buf[96];
  std::snprintf(buf, sizeof buf, "/braid-%016llx-%s-%d-%d", static_cast<unsigned long long>(h),
                comm, leader_rank, leader_pid);
  return buf;
}

void unlink_segment(const std::string &name) noexcept {
  shm_unlink(name.c_str());
}

}  // namespace braid::detail
