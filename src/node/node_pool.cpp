#include "node/node_pool.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "error.hpp"

namespace braid::detail {
namespace {

constexpr uint32_t kCleaning = UINT32_MAX;

size_t page_round(size_t bytes) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

// The region words, then one line: the count of warm regions and the leader's keep-warm choice.
constexpr size_t kWordsBytes = 64 * ((NodePool::kRegions * sizeof(uint32_t) + 63) / 64);
constexpr size_t kSettingsBytes = 64;

}  // namespace

std::shared_ptr<NodePool> NodePool::adopt(int fd, int local_size, size_t region_bytes,
                                          std::string *why) {
  const size_t bytes = header_bytes(local_size);
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    *why = cat("mmap of the node segment's header (", bytes, " bytes): ", std::strerror(errno));
    close(fd);
    return nullptr;
  }
  return std::shared_ptr<NodePool>(new NodePool(fd, static_cast<char *>(p), bytes, region_bytes));
}

size_t NodePool::header_bytes(int local_size) {
  return page_round(kWordsBytes + kSettingsBytes +
                    static_cast<size_t>(local_size) * kContexts * sizeof(uint32_t));
}

size_t NodePool::file_bytes(int local_size, size_t region_bytes) {
  return header_bytes(local_size) + size_t{kRegions} * page_round(region_bytes);
}

NodePool::NodePool(int fd, char *header, size_t header_bytes, size_t region_bytes)
    : fd_(fd),
      header_(header),
      header_bytes_(header_bytes),
      region_bytes_(page_round(region_bytes)) {}

NodePool::~NodePool() {
  for (char *m : maps_)
    if (m != nullptr) munmap(m, region_bytes_);
  munmap(header_, header_bytes_);
  close(fd_);
}

std::shared_ptr<NodePool> NodePool::create(const std::string &name, int local_size,
                                           size_t region_bytes, bool keep_warm, std::string *why) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    *why = cat("shm_open(", name, ", O_CREAT|O_EXCL): ", std::strerror(errno));
    return nullptr;
  }
  const size_t bytes = file_bytes(local_size, region_bytes);
  // Sparse: only the header and the regions channels touch take memory.
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    *why = cat("ftruncate(", name, ", ", bytes, "): ", std::strerror(errno));
    close(fd);
    shm_unlink(name.c_str());
    return nullptr;
  }
  std::shared_ptr<NodePool> pool = adopt(fd, local_size, region_bytes, why);
  if (!pool) shm_unlink(name.c_str());
  // Before anyone else opens the file (they open it once the leaders agreed: comm_node.cpp).
  if (pool) pool->keep_warm_flag().store(keep_warm ? 1 : 0, std::memory_order_release);
  return pool;
}

std::shared_ptr<NodePool> NodePool::open(const std::string &name, int local_size,
                                         size_t region_bytes, std::string *why) {
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) {
    *why = cat("shm_open(", name, "): ", std::strerror(errno));
    return nullptr;
  }
  struct stat st {};
  const size_t bytes = file_bytes(local_size, region_bytes);
  if (fstat(fd, &st) != 0) {
    *why = cat("fstat(", name, "): ", std::strerror(errno));
    close(fd);
    return nullptr;
  }
  if (static_cast<size_t>(st.st_size) != bytes) {
    *why = cat("node segment ", name, " holds ", st.st_size, " bytes, not the ", bytes,
               " this rank expects");
    close(fd);
    return nullptr;
  }
  return adopt(fd, local_size, region_bytes, why);
}

std::atomic<uint32_t> &NodePool::word(int region) const {
  return reinterpret_cast<std::atomic<uint32_t> *>(header_)[region];
}

std::atomic<uint32_t> &NodePool::warm_count() const {
  return reinterpret_cast<std::atomic<uint32_t> *>(header_ + kWordsBytes)[0];
}

std::atomic<uint32_t> &NodePool::keep_warm_flag() const {
  return reinterpret_cast<std::atomic<uint32_t> *>(header_ + kWordsBytes)[1];
}

bool NodePool::keeps_warm() const {
  return keep_warm_flag().load(std::memory_order_acquire) != 0;
}

std::atomic<uint32_t> &NodePool::box(int local_index, uint32_t context) const {
  auto *boxes = reinterpret_cast<std::atomic<uint32_t> *>(header_ + kWordsBytes + kSettingsBytes);
  return boxes[static_cast<size_t>(local_index) * kContexts + context];
}

int NodePool::claim(uint32_t users, bool *warm) {
  *warm = false;
  // A look before each exchange: every failed one would take the header's line from the ranks
  // that are reading it.
  auto take = [this, users](uint32_t from) {
    for (uint32_t r = 0; r < kRegions; ++r) {
      std::atomic<uint32_t> &w = word(static_cast<int>(r));
      uint32_t expected = from;
      if (w.load(std::memory_order_relaxed) == from &&
          w.compare_exchange_strong(expected, users, std::memory_order_acq_rel))
        return static_cast<int>(r);
    }
    return -1;
  };
  if (warm_count().load(std::memory_order_acquire) != 0) {
    if (const int r = take(kWarm); r >= 0) {
      warm_count().fetch_sub(1, std::memory_order_acq_rel);
      *warm = true;
      return r;
    }
  }
  return take(0);
}

void NodePool::post(int local_index, uint32_t context, int region) {
  box(local_index, context).store(static_cast<uint32_t>(region) + 1, std::memory_order_release);
}

int NodePool::collect(int local_index, uint32_t context) {
  return static_cast<int>(box(local_index, context).exchange(0, std::memory_order_acq_rel)) - 1;
}

off_t NodePool::offset(int region) const {
  return static_cast<off_t>(header_bytes_ + static_cast<size_t>(region) * region_bytes_);
}

char *NodePool::map(int region, std::string *why) {
  const std::lock_guard lock(maps_mutex_);
  char *&m = maps_[region];
  if (m != nullptr) return m;
  void *p = mmap(nullptr, region_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, offset(region));
  if (p == MAP_FAILED) {
    *why = cat("mmap of region ", region, " of the node segment (", region_bytes_,
               " bytes): ", std::strerror(errno));
    return nullptr;
  }
  m = static_cast<char *>(p);
  return m;
}

void NodePool::leave(int region) {
  std::atomic<uint32_t> &w = word(region);
  uint32_t users = w.load(std::memory_order_acquire);
  uint32_t next = 0;
  do {
    if (users == 0 || users == kCleaning || users == kWarm) return;  // not in use
    next = users == 1 ? kCleaning : users - 1;
  } while (!w.compare_exchange_weak(users, next, std::memory_order_acq_rel));
  if (next == kCleaning) give_back(region);
}

bool NodePool::take_warm_place() {
  uint32_t warm = warm_count().load(std::memory_order_acquire);
  do {
    if (warm >= kKeepWarm) return false;
  } while (!warm_count().compare_exchange_weak(warm, warm + 1, std::memory_order_acq_rel));
  return true;
}

void NodePool::give_back(int region) {
  if (keeps_warm() && take_warm_place()) {
    word(region).store(kWarm, std::memory_order_release);
    return;
  }
  // The hole frees the memory and reads as zeros. Where punching is refused, zero it by hand.
  if (fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset(region),
                static_cast<off_t>(region_bytes_)) != 0) {
    std::string why;
    char *m = map(region, &why);
    if (m == nullptr) return;  // never handed out again: it stays kCleaning
    std::memset(m, 0, region_bytes_);
  }
  word(region).store(0, std::memory_order_release);
}

}  // namespace braid::detail
