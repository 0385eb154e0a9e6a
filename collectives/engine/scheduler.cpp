#include "engine/scheduler.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>

#include "comm/transport.hpp"
#include "error.hpp"
#include "intranode/futex.hpp"

namespace braid::coll {
namespace {

constexpr unsigned kStepBits = 16;  // CollContext puts the message step in the low 16 bits
// Idle waiting: spin (lowest latency while the peer runs on another core), then yield (let a
// peer sharing our core run), then sleep on the transport's event fd (stop burning a core in a
// long wait). Time-based, so the phases do not depend on how cheap one progress pass is.
constexpr auto kSpinFor = std::chrono::microseconds(50);
constexpr auto kYieldFor = std::chrono::milliseconds(20);
constexpr int kSleepMs = 1;

}  // namespace

Scheduler::Scheduler(detail::Transport &transport, int rank, int size, double timeout_s,
                     bool oversubscribed, NodeChannel *node)
    : transport_(transport),
      rank_(rank),
      size_(size),
      timeout_s_(timeout_s),
      seq_bits_(std::min(24u, transport.props().tag_bits - kStepBits)),
      oversubscribed_(oversubscribed),
      node_(node) {}

std::shared_ptr<Collective> Scheduler::start(const CallLabel &label, AlgorithmFn algorithm,
                                             CollArgs args, uint64_t seq) {
  // Sequence numbers wrap; only collectives this far apart in flight at once could collide.
  const uint64_t tag_base = (seq & ((uint64_t{1} << seq_bits_) - 1)) << kStepBits;
  auto c = std::make_shared<Collective>(transport_, scratch_, rank_, size_, tag_base, timeout_s_,
                                        label, algorithm, args, node_);
  bool progressed = false;
  if (!c->advance(&progressed)) active_.push_back(c);
  return c;
}

bool Scheduler::progress() {
  bool progressed = false;
  // Collectives that only wait on shared memory do not need the transport; skipping its
  // progress call keeps small node-local calls fast. It still runs now and then, so messages
  // arriving early for a later collective are taken in.
  bool messages = ++passes_ % 64 == 0;
  for (auto &c : active_) messages = messages || c->has_messages();
  try {
    if (messages) transport_.progress();
  } catch (const detail::Failure &f) {
    // A failure of the whole transport (e.g. a fatal device event) ends everything in flight.
    for (auto &c : active_) c->abort(f.code(), f.message());
  }
  for (auto &c : active_) c->advance(&progressed);
  std::erase_if(active_, [](const std::shared_ptr<Collective> &c) { return c->finished(); });
  return progressed;
}

void Scheduler::wait(Collective &c) {
  using Clock = std::chrono::steady_clock;
  const auto spin_for = oversubscribed_ ? Clock::duration::zero() : Clock::duration(kSpinFor);
  auto idle_since = Clock::now();
  unsigned passes = 0;
  while (!c.finished()) {
    bool progressed = progress();
    if (c.finished()) break;
    if (progressed) {
      idle_since = Clock::now();
      passes = 0;
      continue;
    }
    // Reading the clock costs about as much as a pass; look at it every 16 passes.
    if (++passes % 16 != 0 && !oversubscribed_) continue;
    const auto idle = Clock::now() - idle_since;
    if (idle < spin_for) continue;
    if (idle < kYieldFor) {
      sched_yield();
      continue;
    }
    sleep();
  }
}

void Scheduler::sleep() {
  const FlagWait *flag = nullptr;
  for (auto &c : active_) {
    if (c->has_messages()) {
      flag = nullptr;
      break;
    }
    if (flag == nullptr && c->blocked_on_flag() && c->blocked_on_flag()->sleepers)
      flag = c->blocked_on_flag();
  }
  if (flag != nullptr) {
    futex_sleep(*flag, kSleepMs * 1000L);
    return;
  }
  try {
    transport_.wait(kSleepMs);
  } catch (const detail::Failure &f) {
    for (auto &a : active_) a->abort(f.code(), f.message());
  }
}

}  // namespace braid::coll
