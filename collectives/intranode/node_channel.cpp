#include "intranode/node_channel.hpp"

#include <unistd.h>

#include <cstring>

#include "intranode/futex.hpp"
#include "node/placement.hpp"

namespace braid::coll {
namespace {

constexpr size_t kPage = 4096;

size_t round_up(size_t v, size_t to) {
  return (v + to - 1) / to * to;
}

size_t controls_bytes(int local_size) {
  return round_up((sizeof(PeerControl) + sizeof(InlineSlot) * NodeChannel::kBuffers) *
                      static_cast<size_t>(local_size),
                  kPage);
}

constexpr size_t kPerRankBuffers = NodeChannel::kWindow * NodeChannel::kBuffers;

}  // namespace

size_t NodeChannel::segment_bytes(int local_size) {
  return controls_bytes(local_size) + kPerRankBuffers * static_cast<size_t>(local_size);
}

NodeChannel::NodeChannel(char *base, const detail::NodeMap &map)
    : map_(map),
      controls_(reinterpret_cast<PeerControl *>(base)),
      slots_(base != nullptr
                 ? reinterpret_cast<InlineSlot *>(base + sizeof(PeerControl) * map.local.size())
                 : nullptr),
      buffers_(base != nullptr ? base + controls_bytes(map.local_size()) : nullptr),
      known_done_(static_cast<size_t>(map.local_size()), 0),
      known_entered_(static_cast<size_t>(map.local_size()), 0),
      busy_(static_cast<size_t>(map.local_size()), 0),
      busy_turn_(static_cast<size_t>(map.local_size()), 0),
      mappings_(map.local_size()),
      cma_state_(static_cast<size_t>(map.local_size()), 0) {
  unchecked_.reserve(kCallSlots);  // no allocation in a call
  enable_light_publish();
  for (StreamChoice &s : deposit_stream_) s.time_at_every_size();
  // A gather's root chooses for its depositors (shm_gather.cpp), streaming first: in a slow
  // spell its copy path keeps single copy and runs the windows only in its retries, in which
  // this choice holds, so the windows must be offered at their best there to be chosen.
  deposit_stream_[static_cast<size_t>(CollKind::gather)].time_at_every_size(true);
}

void NodeChannel::seed_copy_choice(const CostModel &model) {
  for (size_t k = 0; k < CopyChooser::kClasses; ++k) {
    const size_t bytes = kSingleCopyMinBytes << k;
    const double b = static_cast<double>(bytes);
    chooser_.seed(bytes, model.windows_us(bytes) * 1e3 / b, model.single_us(bytes, 1) * 1e3 / b);
  }
}

bool NodeChannel::cma_usable(int local) {
  int8_t &state = cma_state_[static_cast<size_t>(local)];
  if (state == 0) {
    char probe;
    state = cma_read(pid(local), ctl(local).self_addr, &probe, 1) ? 1 : -1;
  }
  return state > 0;
}

void NodeChannel::place_controls(char *base, int local_size, int numa_node, bool reset) {
  detail::place_near_this_rank(base, controls_bytes(local_size), numa_node);
  // The windows need no reset: every read of one waits for its flag, which is in these lines.
  if (reset) std::memset(base, 0, controls_bytes(local_size));
}

void NodeChannel::claim_own_part(int numa_node) {
  // Each rank's buffers are its own; the control lines, shared by all, the leader placed.
  detail::place_near_this_rank(buffer(me(), 0), kPerRankBuffers, numa_node);
  ctl(me()).pid = static_cast<int32_t>(getpid());
  ctl(me()).self_addr = reinterpret_cast<uintptr_t>(&ctl(me()));
  if (cma_mode_ != detail::CmaMode::off) allow_cma_readers();
}

void NodeChannel::touch_peer_parts() const {
  detail::read_every_page(controls_, controls_bytes(size()));
  for (int s = 0; s < size(); ++s)
    if (s != me()) detail::read_every_page(buffer(s, 0), kPerRankBuffers);
}

FlagWait NodeChannel::flag(int local, Counter c, uint32_t target, const char *what) const {
  PeerControl &p = ctl(local);
  return FlagWait{&(p.*c), target, world_rank(local), p.pid, &p.sleepers, what};
}

FlagWait NodeChannel::inline_flag(int local, uint32_t window, const char *what) const {
  PeerControl &p = ctl(local);
  return FlagWait{
      &inline_slot(local, window).posted, window + 1, world_rank(local), p.pid, &p.sleepers, what};
}

void NodeChannel::publish_inline(uint32_t window) {
  coll::publish(inline_slot(me(), window).posted, ctl(me()).sleepers, window + 1);
}

FlagWait NodeChannel::entered(int local, uint32_t turn, const char *what) const {
  PeerControl &p = ctl(local);
  FlagWait f{&call_slot(local, turn).mark, turn + 1, world_rank(local), p.pid, &p.sleepers, what};
  f.long_wait = busy_[local] != 0 && static_cast<int32_t>(turn - (busy_turn_[local] + 1)) >= 0;
  return f;
}

void NodeChannel::publish_entry(uint32_t turn) {
  coll::publish(call_slot(me(), turn).mark, ctl(me()).sleepers, turn + 1);
}

void NodeChannel::publish(Counter c, uint32_t value) {
  PeerControl &p = ctl(me());
  coll::publish(p.*c, p.sleepers, value);
}

int NodeChannel::buffer_blocker(uint32_t window) {
  const uint32_t need = window + 1 - kBuffers;
  for (int s = 0; s < size(); ++s) {
    if (s == me() || static_cast<int32_t>(known_done_[s] - need) >= 0) continue;
    const uint32_t d = ctl(s).done.load(std::memory_order_acquire);
    if (static_cast<int32_t>(d - known_done_[s]) > 0) known_done_[s] = d;
    if (static_cast<int32_t>(known_done_[s] - need) < 0) return s;
  }
  return -1;
}

int NodeChannel::slot_blocker(uint32_t turn, uint32_t ahead) {
  // The first turns have no earlier one to wait for and write slots never written before.
  // Counted in turns taken, not records published: a turn taken and then given up (a failed
  // call) still moves the slots on.
  if (turns_taken_ <= uint64_t{ahead} + 1) return -1;
  const uint32_t need = turn - ahead;  // every other rank has entered it
  for (int s = 0; s < size(); ++s) {
    if (s == me() || static_cast<int32_t>(known_entered_[s] - (need + 1)) >= 0) continue;
    saw_entered(s, call_slot(s, need).mark.load(std::memory_order_acquire));
    if (static_cast<int32_t>(known_entered_[s] - (need + 1)) < 0) return s;
  }
  return -1;
}

FlagWait NodeChannel::buffer_free(int local, uint32_t window) const {
  return flag(local, &PeerControl::done, window + 1 - kBuffers, "finish reading an earlier window");
}

}  // namespace braid::coll
