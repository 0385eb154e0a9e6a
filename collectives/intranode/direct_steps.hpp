// The steps the direct (zero-copy and single-copy) node-local collectives share (direct.hpp):
// reading the peers' DirectRefs, the agreement to go direct, reaching a peer's buffer (mapped
// or through CMA) and the end of the call. Internal to direct*.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "intranode/direct.hpp"

namespace braid::coll {

// Local rank `local`'s DirectRefs of `turn` (the first bytes of its call slot's data).
DirectRefs refs_of(const NodeChannel &ch, int local, uint32_t turn);

// Publishes whether this rank is ready (window w's `posted`) and learns whether all are.
Task agree_to_go_direct(CollContext &ctx, NodeChannel &ch, uint32_t w, bool ready, bool *all);
// The agreement step where it is needed: when some buffer is mapped (mapping can fail). When
// every reference is CMA, each reader offered its own only because it wants single copy and
// can read every peer (NodeChannel::want_single), so all go without asking (*all = true).
Task agree_if_mapped(CollContext &ctx, NodeChannel &ch, uint32_t w, bool any_mapped, bool ready,
                     bool *all);
// Waits until every other rank published `done` of window w (`what`: the step, for errors).
Task wait_all_done(CollContext &ctx, NodeChannel &ch, uint32_t w, const char *what);

// A peer's buffer as this rank reaches it: mapped into this process, or through CMA.
struct PeerBuffer {
  char *mapped = nullptr;
  int pid = 0;
  uint64_t addr = 0;  // in the peer, when not mapped
};

// Peer `s`'s buffer of `bytes` described by `ref`; false when it can be neither mapped nor read.
bool open_peer(NodeChannel &ch, int s, SharedRef ref, size_t bytes, PeerBuffer *out);
// Copies `bytes` at `offset` of peer `s`'s buffer `b` to `dst` (a mapped buffer's with
// streaming stores where `streaming`, OwnBlock::streaming). A refused CMA read (the peer is
// gone) is BRAID_ERR_PEER_FAILED naming the peer. Nothing writes a peer's memory by CMA: a peer
// that failed and returned may have reused it.
void copy_from(const NodeChannel &ch, int s, const PeerBuffer &b, size_t offset, void *dst,
               size_t bytes, bool streaming = false);

// The other local ranks of n, from the one after `me` round to the one before it: where every
// rank reads every other's buffer, no two read the same one at the same step (pairwise
// exchange's order), instead of all starting with local rank 0's.
struct ReadingOrder {
  struct Iter {
    int n, me, i;
    int operator*() const { return (me + i) % n; }
    Iter &operator++() {
      ++i;
      return *this;
    }
    bool operator!=(const Iter &o) const { return i != o.i; }
  };
  int n, me;
  Iter begin() const { return {n, me, 1}; }
  Iter end() const { return {n, me, n}; }
};
inline ReadingOrder reading_order(int n, int me) {
  return {n, me};
}

// Reduces `count` elements at byte `src_at` of every rank's input `in` (this rank's own mapped)
// into `dst`, in local rank order, the lowest rank on the left (every node path's bits), a chunk
// at a time, staging what is read through CMA. `dst` may be local rank `dst_input`'s input
// there (in place; -1: none), and overlaps no input otherwise. `after_reads`, if given, runs
// once every peer's input has been read: where all are read through CMA, before the last
// reduction, so that a rank whose buffer was read may go on while this one reduces (Open MPI's
// non-root returns once its data is read, too); where some are mapped, after it.
// A callback without allocation: a function and its argument.
struct AfterReads {
  void (*fn)(const void *) = nullptr;
  const void *arg = nullptr;
  void operator()() const { fn(arg); }
  explicit operator bool() const { return fn != nullptr; }
  // Calls `f()` (a lambda: its call operator is const), which must outlive the call of
  // reduce_from_peers.
  template <class F>
  static AfterReads of(const F &f) {
    return {[](const void *p) { (*static_cast<const F *>(p))(); }, &f};
  }
};
void reduce_from_peers(CollContext &ctx, const NodeChannel &ch, const CollArgs &args,
                       const std::vector<PeerBuffer> &in, size_t src_at, size_t count, char *dst,
                       int dst_input, AfterReads after_reads = {});

// Whether this rank is ready to go direct with the peers' buffers it opened (`opened`), and
// what it tells its chooser: reaching any of them by CMA is single copy, which it may decline.
bool ready_to_read(NodeChannel &ch, bool opened, bool any_cma, size_t bytes, DirectResult *res);
// The call ran direct (single: through CMA): counts it and says so in *res.
void count(NodeChannel &ch, bool single, DirectResult *res);

}  // namespace braid::coll
