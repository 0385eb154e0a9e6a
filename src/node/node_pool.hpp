// NodePool: the one shared-memory file of a node's ranks, in which every communicator with two
// or more ranks on the node keeps its node-local channel, each in a region of its own.
// braid_init creates it (the world's channel takes the first region); split and dup take a free
// region for the child instead of creating a segment of their own, so a child costs no
// shm_open and no name in /dev/shm, and its memory goes back (or stays warm for the next child,
// below) when the last of its ranks on the node frees it.
//
// Layout (page aligned): a header, then kRegions regions of region_bytes() each. The header holds
// one word per region (how many ranks still use it; 0 when free and zero-filled; kWarm when free
// with its last communicator's contents; kCleaning while its last user gives its memory back), a
// line with the pool's settings, and a mailbox per rank of the node and context id. The file is
// sparse: a region takes memory when a channel first touches it.
//
// What a freed region costs the next communicator: each process maps a region once and keeps the
// mapping while the pool lives, and up to kKeepWarm free regions keep their pages ("warm"), so a
// communicator made in a warm region faults no page in and punches no hole (on the 2-core VMs a
// 2-rank dup took 8.4 ms when every region was given back by a hole: 768 page faults at 4-6 us,
// munmap and fallocate). The others are given back by punching a hole (fallocate), which frees
// the memory and leaves them zero-filled. The price: up to kKeepWarm regions' memory stays with
// the job after its communicators are freed, at most what the largest of them touched (a region
// holds a whole node's channel: 1 MiB of windows per rank of the node). Pools on hosts with
// several NUMA nodes keep none warm: there each rank's part is placed on its rank's node when
// first touched, and a warm region would keep the last communicator's placement.
//
// How a communicator's ranks on the node agree on a region without a message of their own: the
// lowest of them claims one and posts its number in each other's mailbox under the
// communicator's context id. A rank's live communicators have distinct context ids, so no other
// communicator writes that box before the rank has collected it (after its leaders agreed that
// each of them found a region: comm_node.cpp).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace braid::detail {

class NodePool {
 public:
  // Communicators (of one process, or of disjoint sets of ranks) that may hold a region of one
  // node at once; one more finds the node-local path off (and says so). The file is sparse, so
  // regions nobody uses cost address space in the file only, not memory.
  static constexpr uint32_t kRegions = 128;
  // Context ids a rank can hold (coll::Scheduler::kMaxContexts; comm_node.cpp checks).
  static constexpr uint32_t kContexts = 1024;
  // Free regions that keep their pages (see above) when the pool keeps any.
  static constexpr uint32_t kKeepWarm = 2;

  // The node's leader: creates the file `name` for `local_size` ranks, with regions of at least
  // `region_bytes`, keeping up to kKeepWarm free regions warm if `keep_warm` (every rank of the
  // node follows the leader's choice). Null, and the reason in *why, when it cannot.
  static std::shared_ptr<NodePool> create(const std::string &name, int local_size,
                                          size_t region_bytes, bool keep_warm, std::string *why);
  // The node's other ranks, once the leader has created it.
  static std::shared_ptr<NodePool> open(const std::string &name, int local_size,
                                        size_t region_bytes, std::string *why);
  NodePool(const NodePool &) = delete;
  NodePool &operator=(const NodePool &) = delete;
  ~NodePool();

  size_t region_bytes() const { return region_bytes_; }

  // A free region for `users` ranks (each leaves it once), a warm one first, or -1 when all are
  // taken. *warm says whether it holds its last communicator's bytes (else it is zero-filled):
  // the claimer then resets what must start from zeros.
  int claim(uint32_t users, bool *warm);
  // Gives back a region that was claimed but never handed out.
  void unclaim(int region) { give_back(region); }
  // Tells the rank with index `local_index` on the node (in the pool's, i.e. the world's,
  // numbering) which region its communicator `context` has; collect reads and clears it
  // (-1: nothing posted).
  void post(int local_index, uint32_t context, int region);
  int collect(int local_index, uint32_t context);
  // This process's mapping of `region`, made at the first call and kept while the pool lives;
  // null, and the reason in *why, when it cannot be mapped.
  char *map(int region, std::string *why);
  // One user of `region` is done with it; the last keeps it warm or gives its memory back.
  void leave(int region);

  // Ranks using `region` (tests; kWarm for a warm free region).
  uint32_t users(int region) const { return word(region).load(std::memory_order_acquire); }
  bool keeps_warm() const;
  static constexpr uint32_t kWarm = UINT32_MAX - 1;

 private:
  NodePool(int fd, char *header, size_t header_bytes, size_t region_bytes);
  // Maps the header of the open file `fd` and owns both; closes fd and says why when it cannot.
  static std::shared_ptr<NodePool> adopt(int fd, int local_size, size_t region_bytes,
                                         std::string *why);
  off_t offset(int region) const;
  static size_t header_bytes(int local_size);
  static size_t file_bytes(int local_size, size_t region_bytes);
  std::atomic<uint32_t> &word(int region) const;
  std::atomic<uint32_t> &warm_count() const;
  std::atomic<uint32_t> &keep_warm_flag() const;
  std::atomic<uint32_t> &box(int local_index, uint32_t context) const;
  void give_back(int region);
  // Counts one more warm region if fewer than kKeepWarm are.
  bool take_warm_place();

  int fd_;
  char *header_;
  size_t header_bytes_;
  size_t region_bytes_;
  std::mutex maps_mutex_;  // communicators of different threads are made at once
  char *maps_[kRegions] = {};
};

// One rank's use of a region of the pool: leaves it when destroyed. Holds the pool, which owns
// this process's mappings of its regions.
class RegionLease {
 public:
  RegionLease() = default;
  RegionLease(std::shared_ptr<NodePool> pool, int region)
      : pool_(std::move(pool)), region_(region) {}
  RegionLease(RegionLease &&o) noexcept
      : pool_(std::move(o.pool_)), region_(std::exchange(o.region_, -1)) {}
  RegionLease &operator=(RegionLease &&o) noexcept {
    if (this != &o) {
      reset();
      pool_ = std::move(o.pool_);
      region_ = std::exchange(o.region_, -1);
    }
    return *this;
  }
  ~RegionLease() { reset(); }

  const std::shared_ptr<NodePool> &pool() const { return pool_; }
  int region() const { return region_; }
  void reset() {
    if (pool_ && region_ >= 0) pool_->leave(region_);
    region_ = -1;
  }

 private:
  std::shared_ptr<NodePool> pool_;
  int region_ = -1;
};

}  // namespace braid::detail
