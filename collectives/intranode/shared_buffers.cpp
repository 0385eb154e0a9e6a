#include "intranode/shared_buffers.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "log.hpp"
#include "memory/region_registry.hpp"

namespace braid::coll {

SharedRef shared_ref(const void *p, size_t bytes) {
  const auto region = detail::RegionRegistry::instance().find(p, bytes);
  if (!region || region->fd < 0) return {};
  return SharedRef{region->fd, static_cast<uint32_t>(region->id),
                   static_cast<uint64_t>(static_cast<const char *>(p) - region->base)};
}

PeerMappings::~PeerMappings() {
  for (auto &list : peers_)
    for (Mapping &m : list) munmap(m.base, m.bytes);
}

size_t PeerMappings::mapped() const {
  size_t n = 0;
  for (const auto &list : peers_) n += list.size();
  return n;
}

char *PeerMappings::map(int local, int pid, SharedRef ref, size_t bytes) {
  auto &list = peers_[static_cast<size_t>(local)];
  auto inside = [&](const Mapping &m) -> char * {
    return ref.offset <= m.bytes && bytes <= m.bytes - ref.offset ? m.base + ref.offset : nullptr;
  };
  for (Mapping &m : list)
    if (m.region == ref.region && m.fd == ref.fd) {
      m.last_use = ++uses_;
      return inside(m);
    }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, ref.fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    detail::log(detail::LogLevel::info, "node peer ", local, ": cannot open ", path, " (",
                std::strerror(errno), "); its buffers are copied through the segment");
    return nullptr;
  }
  struct stat st {};
  const bool sized = fstat(fd, &st) == 0 && st.st_size > 0;
  const size_t len = sized ? static_cast<size_t>(st.st_size) : 0;
  // MAP_POPULATE: the page tables are filled now, once, not by faults inside collectives.
  void *p = sized ? mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (p == MAP_FAILED) {
    detail::log(detail::LogLevel::info, "node peer ", local, ": cannot map ", path);
    return nullptr;
  }
  if (list.size() >= kPerPeer) {
    auto oldest = std::min_element(
        list.begin(), list.end(),
        [](const Mapping &a, const Mapping &b) { return a.last_use < b.last_use; });
    munmap(oldest->base, oldest->bytes);
    list.erase(oldest);
  }
  list.push_back(Mapping{ref.fd, ref.region, static_cast<char *>(p), len, ++uses_});
  return inside(list.back());
}

}  // namespace braid::coll
