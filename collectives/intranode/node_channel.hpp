// NodeChannel: this rank's view of the node-local shared-memory segment that the ranks of one
// node use for their collectives.
//
// Synchronisation is by window: every collective through the segment cuts its data into windows
// of at most kWindow bytes, and every rank of the node walks the same sequence of windows (the
// ranks call collectives in the same order). Window J uses buffer J % kBuffers. A rank publishes
// J + 1 in `posted` when its buffer holds its data for window J, in `reduced` when its share of
// the reduction is in its buffer, and in `done` when it has finished reading everyone's buffers.
// Before writing buffer J % kBuffers a rank waits until every rank's `done` reached
// J + 1 - kBuffers, i.e. nobody still reads that buffer's previous window.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/coll_context.hpp"
#include "engine/coll_kind.hpp"
#include "intranode/deposit_gauge.hpp"
#include "intranode/segment_layout.hpp"
#include "intranode/shared_buffers.hpp"
#include "intranode/single_copy.hpp"
#include "intranode/stream_choice.hpp"
#include "node/cma_mode.hpp"
#include "node/node_map.hpp"
#include "selection/cost_model.hpp"

namespace braid::coll {

class NodeChannel {
 public:
  // 256 KiB: on the 2-core EPYC VM 8% faster than 128 KiB for 1-8 MiB allreduces (fewer
  // synchronisations per byte), 512 KiB no better; four of them per rank still fit its L2.
  static constexpr size_t kWindow = size_t{256} << 10;
  static constexpr uint32_t kBuffers = 4;

  // Bytes the segment needs for `local_size` ranks.
  static size_t segment_bytes(int local_size);

  // `base` is the mapped segment, its control lines zero (place_controls).
  NodeChannel(char *base, const detail::NodeMap &map);
  NodeChannel(const NodeChannel &) = delete;
  NodeChannel &operator=(const NodeChannel &) = delete;

  // The leader's placement of the control lines, which every rank writes: called by the
  // leader as soon as it has its region, before any other rank can map it (a rank on another
  // node writing its line first would put the page there, the bind after it notwithstanding).
  // `numa_node`: the leader's node, -1 when it is not bound to one. `reset`: the region holds
  // an earlier communicator's lines (a warm region, node_pool.hpp), which are zeroed.
  static void place_controls(char *base, int local_size, int numa_node, bool reset);
  // Touches this rank's part first (placement) and records its pid; before anyone uses it.
  // `numa_node`: this rank's node, -1 when it is not bound to one.
  void claim_own_part(int numa_node);
  // Reads every page of the segment this rank did not touch in claim_own_part (the control
  // lines, the others' buffers), once every rank has claimed its own: a process's first access
  // to a page of the segment is then paid when the communicator is made, not in the first call
  // that uses each window (4-6 us a page on the 2-core VMs: placement.hpp). On a fresh
  // communicator there, the first 256 KiB call through each of a peer's windows cost 0.4-0.6 ms
  // against 15-20 warm; a benchmark's sweep pays that at its first size that fills a window,
  // inside the timed calls: 2-rank 256 KiB allgathers were 1.1-1.2x slower than forced windows, and
  // the copy chooser (single_copy.hpp) judged the windows by those calls.
  void touch_peer_parts() const;

  const detail::NodeMap &map() const { return map_; }
  int size() const { return map_.local_size(); }
  int me() const { return map_.local_rank; }
  int world_rank(int local) const { return map_.local[local]; }

  char *buffer(int local, uint32_t window) const {
    return buffers_ + (static_cast<size_t>(local) * kBuffers + window % kBuffers) * kWindow;
  }
  InlineSlot &inline_slot(int local, uint32_t window) const {
    return slots_[static_cast<size_t>(local) * kBuffers + window % kBuffers];
  }
  CallSlot &call_slot(int local, uint32_t turn) const {
    return ctl(local).calls[turn % kCallSlots];
  }

  // Peer `local`'s buffer described by `ref` in this process, or null (see PeerMappings).
  char *map_peer(int local, SharedRef ref, size_t bytes) {
    return mappings_.map(local, ctl(local).pid, ref, bytes);
  }
  int pid(int local) const { return ctl(local).pid; }

  // More ranks than cores compete for this rank's CPUs (NodeDiscovery::oversubscribed): a
  // root that waits for its readers waits for the scheduler (root_mapped_min, direct.hpp).
  void set_oversubscribed(bool on) { oversubscribed_ = on; }
  bool oversubscribed() const { return oversubscribed_; }

  // The last-level cache this rank's node shares with others: `bytes` (0: unknown), shared by
  // `ranks` of its ranks (this one included).
  void set_shared_cache(size_t bytes, int ranks) {
    for (StreamChoice &s : stream_) s.set_cache(bytes, ranks);
    if (bytes == 1) gauge_.always_stream();  // BRAID_CACHE_BYTES=1: everything streams
  }
  // How this rank deposits into the windows in kinds without a timed choice of their own
  // (allgather(v), alltoall(v)): streamed in a slow spell of the link (DepositGauge).
  DepositGauge &deposit_gauge() { return gauge_; }
  uint64_t gauged_streamed_deposits() const { return gauge_.streamed(); }
  // Whether a call of `kind` in which each rank sends and receives `footprint` bytes should
  // stream its copies into the receive buffer past the cache (copy_streaming): by the share of
  // the cache the buffers of the ranks sharing it fill, and in between by this rank's timings
  // of that kind (StreamChoice; the call's CopyTimer reports them: a gather's root copies
  // n - 1 blocks for a footprint of two, an alltoall n - 1 for 2n). Counted when it should.
  bool streams(CollKind kind, size_t footprint) {
    pending_stream_ = &stream_[static_cast<size_t>(kind)];
    return pending_stream_->decide(footprint, cma_retry_);
  }
  // What the call whose streams() or streams_deposits() asked a chooser took (CopyTimer); true
  // when the call tried streaming's other way or was the first after such a try (its time then
  // says little about the copy path). Either choice's time is not counted while the other tries its
  // way not kept.
  bool stream_measured(uint64_t ns) {
    StreamChoice *copies = std::exchange(pending_stream_, nullptr);
    StreamChoice *deposits = std::exchange(pending_deposit_, nullptr);
    const bool copies_try = copies != nullptr && copies->trying();
    const bool deposits_try = deposits != nullptr && deposits->trying();
    bool unsettled = false;
    if (copies != nullptr) unsettled = copies->measured(ns, cma_retry_ || deposits_try);
    if (deposits != nullptr)
      unsettled = deposits->measured(ns, cma_retry_ || copies_try) || unsettled;
    return unsettled;
  }
  // Whether the deposits into the node's windows in a call of `kind` go with streaming stores,
  // decided by the rank whose time in the call shows them: each depositing rank of a reduce past
  // reduce_whole (node_phases.cpp), a gather's root for its depositors (shm_gather.cpp). Timed
  // at every size, whatever the cache (their cost is the core-to-core link's), by a StreamChoice
  // of their own per kind, held while the copy path or streams()' choice of the same call tries
  // its other way. Counted when they stream.
  bool streams_deposits(CollKind kind, size_t bytes) {
    pending_deposit_ = &deposit_stream_[static_cast<size_t>(kind)];
    const bool hold = cma_retry_ || (pending_stream_ != nullptr && pending_stream_->trying());
    return pending_deposit_->decide(bytes, hold);
  }
  // The call that asked streams_deposits() made none (it went another way): neither counted
  // nor timed (a try of the way not kept that it started is lost).
  void deposits_not_made() {
    if (pending_deposit_ != nullptr) std::exchange(pending_deposit_, nullptr)->forget();
  }
  uint64_t streamed_calls() const {
    uint64_t n = 0;
    for (const StreamChoice &s : stream_) n += s.streamed_calls();
    return n;
  }
  uint64_t streamed_deposit_calls() const {
    uint64_t n = 0;
    for (const StreamChoice &s : deposit_stream_) n += s.streamed_calls();
    return n;
  }
  const StreamChoice &stream_choice(CollKind kind) const {
    return stream_[static_cast<size_t>(kind)];
  }

  // Single copy through CMA for ordinary buffers (single_copy.hpp): BRAID_CMA's mode, and
  // whether this rank wants it for the next call of `bytes` it copies.
  void set_cma_mode(detail::CmaMode mode) { cma_mode_ = mode; }
  // BRAID_CMA=auto: the path is the chooser's (on and off force it).
  bool cma_automatic() const { return cma_mode_ == detail::CmaMode::automatic; }
  // The cost model's prediction of each copy path per size class, as the chooser's first
  // figures (CopyChooser::seed).
  void seed_copy_choice(const CostModel &model);
  // Whether this rank's buffers of a call of `bytes` are offered to peers through CMA.
  bool cma_offered(size_t bytes) const {
    return cma_mode_ != detail::CmaMode::off && bytes >= kSingleCopyMinBytes;
  }
  bool cma_wanted(size_t bytes) {
    if (!cma_offered(bytes)) return false;
    if (cma_mode_ == detail::CmaMode::always) return true;
    const bool single = chooser_.prefer_single(bytes);
    cma_retry_ = cma_retry_ || chooser_.unsettled(bytes);
    return single;
  }
  // For a call in which this rank reads its peers' buffers: whether it wants single copy this
  // time (its chooser, asked once per call: the answer holds until the turn ends) and can read
  // every peer's memory. A rank offers its buffers by CMA only when it does, so when every
  // reader offered, nobody needs to ask the others (direct.cpp).
  bool want_single(size_t bytes) {
    if (!decided_) {
      decided_ = true;
      want_ = cma_wanted(bytes);
      for (int s = 0; want_ && s < size(); ++s) want_ = s == me() || cma_usable(s);
    }
    return want_;
  }
  // Whether this rank asked its chooser in the current call (then it reports what it cost).
  bool decided() const { return decided_; }
  // What the last call of `bytes` cost by the path it took, when this rank chose it.
  void cma_measured(bool single, size_t bytes, uint64_t ns) {
    if (cma_mode_ == detail::CmaMode::automatic) chooser_.measured(single, bytes, ns);
  }
  // Whether this rank may read local rank `local`'s memory with CMA: tried once per peer with
  // a one-byte read of its control line, so a kernel that refuses is told apart from a peer
  // gone mid-call.
  bool cma_usable(int local);
  // After a broadcast or scatter of `bytes` this rank read from `root`'s buffer: what it wants
  // for the next one of that size class (PeerControl::wants_single).
  void publish_read_choice(int root, size_t bytes) {
    const bool single = cma_wanted(bytes) && cma_usable(root);
    ctl(me()).wants_single[CopyChooser::class_of(bytes)].store(single ? 2 : 1,
                                                               std::memory_order_relaxed);
  }
  // What this rank's part of a call of `bytes` cost it by that path (DirectResult::weighs_call).
  void publish_part_cost(bool single, size_t bytes, uint64_t ns) {
    const auto v = static_cast<uint32_t>(std::min<uint64_t>(ns, UINT32_MAX));
    ctl(me()).part_ns[CopyChooser::class_of(bytes)][single ? 1 : 0].store(
        std::max<uint32_t>(v, 1), std::memory_order_relaxed);
  }
  // What a chooser's call of `bytes` that cost it `ns` by that path is judged by. With a core
  // each, its own time: the others' parts run beside it. Where ranks share cores, every rank's
  // time in the call is taken from the same cores, so the call costs the sum of the ranks'
  // parts (their latest by that path; a rank not yet measured counts as this one): a reader's
  // own time leaves out the root's copying into the windows, and its waiting for the readers
  // in single copy, and chose the dearer path (4-rank scatters on 2 cores, 32-128 KiB); a
  // gather's or reduce's root's leaves out the others' waiting for its reads.
  uint64_t call_cost(bool single, size_t bytes, uint64_t ns) const {
    if (!oversubscribed_) return ns;
    uint64_t sum = ns;
    for (int s = 0; s < size(); ++s) {
      if (s == me()) continue;
      const uint32_t theirs = ctl(s).part_ns[CopyChooser::class_of(bytes)][single ? 1 : 0].load(
          std::memory_order_relaxed);
      sum += theirs != 0 ? theirs : ns;
    }
    return sum;
  }
  // Whether every other rank wants to read this rank's buffer of `bytes` by single copy.
  bool readers_want_single(size_t bytes) const {
    if (!cma_offered(bytes)) return false;
    for (int s = 0; s < size(); ++s)
      if (s != me() &&
          ctl(s).wants_single[CopyChooser::class_of(bytes)].load(std::memory_order_relaxed) != 2)
        return false;
    return true;
  }
  uint64_t single_copy_calls() const { return single_copy_calls_.load(std::memory_order_relaxed); }
  void count_single_copy_call() { single_copy_calls_.fetch_add(1, std::memory_order_relaxed); }

  void set_direct_ok(bool ok) { ctl(me()).direct_ok.store(ok ? 1 : 0, std::memory_order_relaxed); }
  // Read after seeing that rank's `posted` for the step (acquire), so it is that step's value.
  bool direct_ok(int local) const {
    return ctl(local).direct_ok.load(std::memory_order_relaxed) != 0;
  }
  // Collectives that ran in place on braid_mem_alloc buffers (a counter for braid_comm_counters).
  uint64_t direct_calls() const { return direct_calls_.load(std::memory_order_relaxed); }
  void count_direct_call() { direct_calls_.fetch_add(1, std::memory_order_relaxed); }
  // Small blocking calls completed inline (inline_call.hpp), for braid_comm_counters.
  uint64_t inline_calls() const { return inline_calls_.load(std::memory_order_relaxed); }
  // A load and a store, not a locked add: this thread is the only writer, and a locked
  // instruction would wait for the call's stores to the slot to leave the store buffer
  // (futex.hpp's publish).
  void count_inline_call() {
    inline_calls_.store(inline_calls_.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
  }

  // The next window of the node's sequence.
  uint32_t take_window() { return next_window_++; }

  // Counter `c` of local rank `local` has reached `target`; `what` names the step for errors.
  FlagWait flag(int local, Counter c, uint32_t target, const char *what) const;
  FlagWait inline_flag(int local, uint32_t window, const char *what) const;
  void publish_inline(uint32_t window);
  // Publishes this rank's counter `c` = value, waking sleepers.
  void publish(Counter c, uint32_t value);
  // A rank that may still read this rank's buffer of `window`'s previous use, or -1 when the
  // buffer is free to write. Uses what this rank already saw of the others, so the common case
  // reads no shared line.
  int buffer_blocker(uint32_t window);
  FlagWait buffer_free(int local, uint32_t window) const;
  // Seeing rank `local` publish v = J + 1 on any counter means it finished window J - 1: ranks
  // walk windows in order.
  void saw(int local, uint32_t v) {
    if (static_cast<int32_t>(v - 1 - known_done_[local]) > 0) known_done_[local] = v - 1;
  }

  // Call slots: before a rank writes its slot for `turn` (rewriting turn - kCallSlots'), every
  // other rank must have entered turn - `ahead` (calls_ahead: 1, or kCallsAhead in most
  // small calls), so finished reading it. A call in which every rank waits for
  // every other (agree_on_call) implies that for the next one; it is still checked at every
  // entry (cheap: what was seen is cached), should a call not wait. The rank that may still
  // read this rank's slot, or -1; uses what this rank already saw.
  int slot_blocker(uint32_t turn, uint32_t ahead);
  FlagWait slot_free(int local, uint32_t turn, uint32_t ahead) const {
    return entered(local, turn - ahead, "finish an earlier collective");
  }
  // Rank `local` has entered `turn`: its record (and tiny data) of that turn are readable.
  // A long wait (FlagWait::long_wait) for an entry after a call left busy (left_busy).
  FlagWait entered(int local, uint32_t turn, const char *what) const;
  // This rank left the call of `turn` while rank `local` still had kLongWaitBytes or more to
  // copy in it (a gather's root reading the ranks after this one): waiting for it to enter a
  // later call is long too. Where ranks share cores, yielding through that wait took half of
  // the root's core (4 ranks on 2 cores, 4 MiB gather: a third of all CPU time in
  // sched_yield). Until this rank sees `local` enter a later call.
  void left_busy(int local, uint32_t turn) {
    busy_[local] = 1;
    busy_turn_[local] = turn;
  }
  // Publishes this rank's entry into `turn`, once its record and data are written.
  void publish_entry(uint32_t turn);
  void saw_entered(int local, uint32_t v) {
    // v = T + 1: `local` has entered turn T.
    if (busy_[local] != 0 && static_cast<int32_t>(v - (busy_turn_[local] + 2)) >= 0)
      busy_[local] = 0;
    if (static_cast<int32_t>(v - known_entered_[local]) > 0) known_entered_[local] = v;
  }

  // The call of `turn` returned without comparing its record with the ones it must (`who`: a
  // local rank, or -1 for every one): they are compared at a later entry (call_check.hpp).
  struct Unchecked {
    uint32_t turn;
    int who;
  };
  void defer_check(uint32_t turn, int who) {
    // Once per turn: the inline path defers before it may hand the call to the coroutine.
    if (unchecked_.empty() || unchecked_.back().turn != turn) unchecked_.push_back({turn, who});
  }
  const std::vector<Unchecked> &unchecked() const { return unchecked_; }
  void checked(uint32_t turn) {
    std::erase_if(unchecked_, [turn](const Unchecked &u) { return u.turn == turn; });
  }
  void clear_unchecked() { unchecked_.clear(); }

  // Collectives through the segment run one at a time per rank, in the order they started, so
  // the window sequence is the same on every rank even with non-blocking calls in flight.
  uint32_t take_turn() {
    ++turns_taken_;
    return next_turn_++;
  }
  // No collective holds or waits for a turn.
  bool idle() const { return serving_.load(std::memory_order_relaxed) == next_turn_; }
  FlagWait turn(uint32_t ticket) const { return FlagWait{&serving_, ticket, -1, 0, nullptr, ""}; }
  // One writer, the thread that holds the communicator: no locked add (count_inline_call).
  void end_turn() {
    decided_ = false;
    cma_retry_ = false;
    pending_stream_ = nullptr;  // a call cut short: its choice's next decide() starts afresh
    pending_deposit_ = nullptr;
    serving_.store(serving_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

 private:
  PeerControl &ctl(int local) const { return controls_[local]; }

  detail::NodeMap map_;
  PeerControl *controls_;
  InlineSlot *slots_;
  char *buffers_;
  uint32_t next_window_ = 0;
  std::vector<uint32_t> known_done_;     // per local rank: a lower bound of its `done`
  std::vector<uint32_t> known_entered_;  // per local rank: a lower bound of its `entered`
  std::vector<uint8_t> busy_;            // per local rank: left_busy
  std::vector<uint32_t> busy_turn_;      // per local rank: the turn left busy
  uint64_t turns_taken_ = 0;             // not wrapping: the first turns write fresh slots
  std::vector<Unchecked> unchecked_;     // oldest first; at most kCallSlots - kCallsAhead
  uint32_t next_turn_ = 0;
  std::atomic<uint32_t> serving_{0};
  PeerMappings mappings_;
  detail::CmaMode cma_mode_ = detail::CmaMode::automatic;
  bool oversubscribed_ = false;
  std::array<StreamChoice, kKindCount> stream_;          // per collective kind
  std::array<StreamChoice, kKindCount> deposit_stream_;  // per kind, timed at every size
  StreamChoice *pending_stream_ = nullptr;               // the one the current turn asked
  StreamChoice *pending_deposit_ = nullptr;              // streams_deposits()' one
  DepositGauge gauge_;
  CopyChooser chooser_;
  bool decided_ = false;    // want_single was asked in the current turn
  bool cma_retry_ = false;  // the current turn retries the copy path not kept, or follows one
  bool want_ = false;
  std::vector<int8_t> cma_state_;  // per local rank: 0 not tried, 1 readable, -1 refused
  std::atomic<uint64_t> single_copy_calls_{0};
  std::atomic<uint64_t> direct_calls_{0};
  std::atomic<uint64_t> inline_calls_{0};
};

// Holds this rank's turn for the lifetime of a collective's coroutine frame.
class Turn {
 public:
  explicit Turn(NodeChannel &ch) : ch_(&ch) {}
  Turn(const Turn &) = delete;
  Turn &operator=(const Turn &) = delete;
  ~Turn() { ch_->end_turn(); }

 private:
  NodeChannel *ch_;
};

}  // namespace braid::coll
