#include "engine/scheduler.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "comm/transport.hpp"
#include "engine/frame_pool.hpp"
#include "error.hpp"
#include "intranode/futex.hpp"
#include "node/home_cpu.hpp"

namespace braid::coll {
namespace {

constexpr unsigned kStepBits = 16;  // CollContext puts the message step in the low 16 bits
// Idle waiting: spin (lowest latency while the peer runs on another core), then yield (let a
// peer sharing our core run), then sleep on the transport's event fd (stop burning a core in a
// long wait). Time-based, so the phases do not depend on how cheap one progress pass is.
constexpr auto kSpinFor = std::chrono::microseconds(50);
constexpr auto kYieldFor = std::chrono::milliseconds(20);
constexpr int kSleepMs = 1;
// A wait this long is one in which the ranks sleeping with this one may all have woken on one
// core: when it ends the rank goes back to its home CPU (node/home_cpu.hpp). The threshold is
// where waits start to sleep; at 100 ms the waits behind a rank that memsets its buffers were
// often shorter, and a 4-rank 16-64 MiB gather, whose waits are all this long, was no slower
// with the moves (9.3 / 59.9 ms a call against 10.5 / 62.0 without, medians of 4 runs).
constexpr auto kHomeAfter = kYieldFor;
// A collective that makes no progress this long is suspected: the ranks are asked over the
// control plane what they called (a mismatch is then reported long before the timeout). The
// check backs off while nothing is found, so a rank that is merely slow costs little.
constexpr double kSuspectAfterS = 1.0;
// Idle progress passes between looks at the clock for the suspicion check.
constexpr unsigned kIdlePassesPerCheck = 64;
constexpr unsigned kSigBits = 8;

// A hash of what the ranks must agree on, folded into the tags (see signature_bits()).
uint64_t signature_hash(const CollArgs &a) {
  const AgreedFields f = agreed_fields(a);
  uint64_t h = 0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(f.kind) + 1);
  auto mix = [&h](uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  };
  mix(f.count);
  mix(static_cast<uint64_t>(static_cast<uint32_t>(f.dtype)));
  mix(static_cast<uint64_t>(static_cast<uint32_t>(f.op)));
  mix(static_cast<uint64_t>(static_cast<uint32_t>(f.root)));
  return h;
}

}  // namespace

Scheduler::Scheduler(detail::Transport &transport, int rank, int size, double timeout_s,
                     bool oversubscribed, int numa_node, NodeChannel *node, const int *members,
                     uint32_t context)
    : transport_(transport),
      rank_(rank),
      size_(size),
      timeout_s_(timeout_s),
      seq_bits_(0),
      oversubscribed_(oversubscribed),
      sig_bits_(0),
      node_(node),
      members_(members),
      context_part_(0),
      scratch_(numa_node) {
  // Tag layout, low to high: step (16 bits), signature, sequence number, context id. 64-bit
  // tags (verbs) have room for all; UCX's 44 keep an 8-bit signature and a 10-bit sequence
  // number; a 32-bit plugin drops the signature.
  const unsigned room = transport.props().tag_bits - kStepBits - kContextBits;
  sig_bits_ = room >= kSigBits + 10 ? kSigBits : 0;
  seq_bits_ = std::min(24u, room - sig_bits_);
  if (context >= kMaxContexts)
    detail::fail(BRAID_ERR_INTERNAL, "context id ", context, " is not below ", kMaxContexts);
  context_part_ = static_cast<uint64_t>(context) << (kStepBits + sig_bits_ + seq_bits_);
}

Scheduler::~Scheduler() {
  for (auto &c : active_)
    c->abort(BRAID_ERR_INVALID_ARGUMENT,
             "its communicator was freed before it completed (braid_finalize, or the unique-id "
             "group's communicator freed)");
}

std::shared_ptr<Collective> Scheduler::start(const CallLabel &label, AlgorithmFn algorithm,
                                             CollArgs args, uint64_t seq) {
  const uint64_t seq_part = seq & ((uint64_t{1} << seq_bits_) - 1);
  const uint64_t sig_part = signature_hash(args) & ((uint64_t{1} << sig_bits_) - 1);
  const uint64_t tag_base = context_part_ | (((seq_part << sig_bits_) | sig_part) << kStepBits);
  started_ = std::max(started_, seq + 1);
  auto c = std::allocate_shared<Collective>(frame_pool::Allocator<Collective>(), transport_,
                                            scratch_, rank_, size_, tag_base, timeout_s_, label,
                                            algorithm, args, node_, members_);
  if (held_back(*c, oldest_in_flight())) {
    active_.push_back(c);  // progress() starts it once the calls before it are done
    return c;
  }
  bool progressed = false;
  if (!c->advance(&progressed))
    active_.push_back(c);
  else if (watch_ && c->result() != BRAID_SUCCESS)
    explain_failures({c});
  return c;
}

bool Scheduler::progress() {
  bool progressed = false;
  // Collectives that only wait on shared memory do not need the transport; skipping its
  // progress call keeps small node-local calls fast. It still runs now and then, so messages
  // arriving early for a later collective are taken in.
  bool messages = ++passes_ % 64 == 0;
  for (auto &c : active_) messages = messages || c->has_messages();
  if (messages) progress_transport();
  if (watch_) watch_peers();
  advance_all(&progressed);
  if (watch_) {
    std::vector<std::shared_ptr<Collective>> failed;
    for (auto &c : active_)
      if (c->finished() && c->result() != BRAID_SUCCESS) failed.push_back(c);
    std::erase_if(active_, [](const std::shared_ptr<Collective> &c) { return c->finished(); });
    if (!failed.empty()) explain_failures(failed);
    if (progressed || active_.empty()) {
      idle_passes_ = 0;
    } else if (++idle_passes_ % kIdlePassesPerCheck == 0) {
      suspect_stall(std::chrono::steady_clock::now());
    }
    return progressed;
  }
  std::erase_if(active_, [](const std::shared_ptr<Collective> &c) { return c->finished(); });
  return progressed;
}

uint64_t Scheduler::oldest_in_flight() const {
  for (const auto &c : active_)  // in the order they were started: oldest first
    if (!c->finished()) return c->label().seq;
  return UINT64_MAX;
}

bool Scheduler::held_back(const Collective &c, uint64_t oldest) const {
  // Sequence numbers wrap in the tags: a call does not start half their range or more ahead of
  // the oldest one still in flight (512 calls with UCX's tags, 32 with a 32-bit plugin's), so
  // two calls in flight never share a tag. A non-blocking call so far ahead returns at once and
  // starts from progress() when the window reaches it.
  const uint64_t window = uint64_t{1} << (seq_bits_ - 1);
  return !c.started() && !c.finished() && oldest != UINT64_MAX && c.label().seq - oldest >= window;
}

void Scheduler::advance_all(bool *progressed) {
  const uint64_t oldest = oldest_in_flight();
  for (auto &c : active_) {
    // One held back when the ranks fall out of step is aborted with the others then
    // (apply_notices), and publish refuses later ones: nothing else to check here.
    if (!held_back(*c, oldest)) c->advance(progressed);
  }
}

void Scheduler::progress_transport() {
  try {
    transport_.progress();
  } catch (const detail::Failure &f) {
    // A failure of the whole transport (e.g. a fatal device event) ends everything in flight.
    for (auto &c : active_) c->abort(f.code(), f.message());
  }
}

void Scheduler::watch_peers() {
  // Notices first: a rank that reported a disagreement and then exited has told the others
  // about the disagreement before they saw it leave, and that is what explains the failure.
  const uint64_t gen = watch_->notice_generation();
  if (gen != notices_seen_) {
    notices_seen_ = gen;
    apply_notices();
  }
  if (watch_->peer_failed()) {
    if (active_.empty()) return;
    // The failure flag is read (acquire) after the rank exited, so what it wrote into shared
    // memory before that is visible: one more pass completes the calls that can finish with
    // what is already here (a rank that leaves right after its last collective is no failure
    // of that call on the others). Calls still waiting, on that rank, on a slower live rank or
    // on a message not yet taken in, fail below.
    std::vector<std::shared_ptr<Collective>> pending;
    for (auto &c : active_)
      if (!c->finished()) pending.push_back(c);
    if (pending.empty()) return;
    progress_transport();
    bool progressed = false;
    const uint64_t oldest = oldest_in_flight();
    for (auto &c : pending)
      if (!held_back(*c, oldest)) c->advance(&progressed);
    // What failed in that pass (the node path's exit check, the transport) is explained here:
    // callers other than progress() (check_peers, suspect_stall) do not explain finished calls.
    std::vector<std::shared_ptr<Collective>> failed_now;
    for (auto &c : pending)
      if (c->finished() && c->result() != BRAID_SUCCESS && !c->explained()) failed_now.push_back(c);
    if (!failed_now.empty()) {
      explain_failures(failed_now);
      for (auto &c : failed_now) c->mark_explained();
    }
    // A notice that arrived with the failure (read after the generation above) explains the
    // calls it names better than the failure does: the rank reported, then exited.
    if (const uint64_t now = watch_->notice_generation(); now != notices_seen_) {
      notices_seen_ = now;
      apply_notices();
    }
    const std::string why = watch_->peer_failure();
    const int failed = watch_->failed_rank();
    for (auto &c : pending) {
      if (c->finished()) continue;
      c->abort(BRAID_ERR_PEER_FAILED, why, failed);
      c->mark_explained();
    }
  }
}

void Scheduler::apply_notices() {
  for (const auto &[seq, text] : watch_->notices()) {
    if (settled(seq)) continue;
    bool in_flight = false;
    for (auto &c : active_)
      if (c->label().seq == seq) {
        in_flight = true;
        c->abort(BRAID_ERR_MISMATCH, text);
        c->mark_explained();
      }
    if (in_flight) {
      settle(seq);
      continue;
    }
    // Not reached yet: when this rank gets there the call runs and fails as the others' did,
    // or is refused if a rank has failed by then; either settles it.
    if (seq >= started_) continue;
    settle(seq);
    // A rank whose part of the call completed (e.g. a broadcast root whose sends went out)
    // learns of the disagreement only now: it has moved on, the others have not.
    if (out_of_step_.empty()) {
      out_of_step_ = detail::cat(text, " (call #", seq,
                                 " had completed on this rank; the ranks are out of step)");
      for (auto &c : active_) {
        c->abort(BRAID_ERR_MISMATCH, out_of_step_);
        c->mark_explained();
      }
    }
  }
}

void Scheduler::settle(uint64_t seq) {
  if (settled(seq)) return;
  // Twice the notices the control plane keeps: a notice still kept was settled more recently.
  constexpr size_t kKept = 128;
  if (settled_.size() >= kKept) settled_.erase(settled_.begin());
  settled_.push_back(seq);
}

// A timeout, a garbled or refused message: ask the other ranks what they called, so the error
// says what actually went wrong (a rank that called something else, a rank that is gone, the
// ranks that never arrived) instead of what it looked like from here.
void Scheduler::explain_failures(const std::vector<std::shared_ptr<Collective>> &finished) {
  // Asked once per pass however many calls failed: it may wait for the control plane.
  std::optional<std::optional<std::string>> first;
  for (const auto &c : finished) {
    const braid_result_t rc = c->result();
    // Whatever it failed with (a timeout that came before the notice, too): it did not
    // complete here, so a notice about it never means this rank is out of step.
    if (rc != BRAID_SUCCESS) settle(c->label().seq);
    if (c->explained()) continue;
    const std::string prefix = c->label().str() + ": ";
    if (rc == BRAID_ERR_PEER_FAILED) {
      // Seen here first, not by the control plane: the node path found a peer's buffer gone
      // (single copy). That peer may be alive and merely have left the call, and exited,
      // because a third rank failed; the failure the control plane learns of is the cause.
      if (!first) first = first_failure();
      if (*first) c->rewrite(rc, prefix + **first);
      c->mark_explained();
      continue;
    }
    if (rc != BRAID_ERR_TIMEOUT && rc != BRAID_ERR_TRANSPORT && rc != BRAID_ERR_MISMATCH) continue;
    // A disagreement this rank saw itself in shared memory (call records) already names both
    // sides: it is told to the others at once, before this rank can return and exit.
    if (c->disagreement()) {
      // Reported already (this rank came to the call after another had found it): the same
      // words on every rank, and nothing more to tell.
      if (auto told = watch_->notice_for(c->label().seq))
        c->rewrite(rc, prefix + *told);
      else
        watch_->announce(c->label().seq, c->message().substr(prefix.size()));
      c->mark_explained();
      continue;
    }
    std::optional<detail::Failure> why = watch_->diagnose(c->label(), rc == BRAID_ERR_TIMEOUT);
    if (why) {
      if (why->code() == BRAID_ERR_TIMEOUT)
        c->rewrite(rc, c->message() + "; " + why->message());
      else
        c->rewrite(why->code(), c->label().str() + ": " + why->message());
    }
    // diagnose() announced what it found; a mismatch it could not explain (a message of the
    // wrong size) is told as it was seen.
    if (c->result() == BRAID_ERR_MISMATCH && !why)
      watch_->announce(c->label().seq,
                       c->message().substr(std::min(prefix.size(), c->message().size())));
  }
}

std::optional<std::string> Scheduler::first_failure() const {
  // A process that dies closes its control connection at once; the control plane's thread
  // sees it within milliseconds. Long enough for that, short next to any timeout.
  constexpr auto kNoticeWithin = std::chrono::milliseconds(200);
  const auto until = std::chrono::steady_clock::now() + kNoticeWithin;
  while (!watch_->peer_failed()) {
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return watch_->peer_failure();
}

void Scheduler::suspect_stall(std::chrono::steady_clock::time_point now) {
  using Clock = std::chrono::steady_clock;
  const auto after = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(kSuspectAfterS, timeout_s_ / 4)));
  if (idle_passes_ == kIdlePassesPerCheck) {  // first look in this idle period
    idle_since_ = now;
    next_check_ = now + after;
    return;
  }
  if (now < next_check_) return;
  std::vector<std::shared_ptr<Collective>> suspects = active_;
  for (const auto &c : suspects) {
    if (c->finished()) continue;
    if (std::optional<detail::Failure> why = watch_->diagnose(c->label(), false)) {
      // A notice that arrived during the query explains more (the disagreement that put the
      // ranks out of step, rather than its consequence here).
      watch_peers();
      if (c->finished()) continue;
      c->abort(why->code(), why->message());
      c->mark_explained();
      settle(c->label().seq);
    }
  }
  std::erase_if(active_, [](const std::shared_ptr<Collective> &c) { return c->finished(); });
  // Back off while the stall has no explanation: a slow rank is not worth a query per second.
  next_check_ = Clock::now() + std::max(after, (Clock::now() - idle_since_));
}

void Scheduler::wait(Collective &c) {
  using Clock = std::chrono::steady_clock;
  const auto spin_for = oversubscribed_ ? Clock::duration::zero() : Clock::duration(kSpinFor);
  // Idle time counts from the first look at the clock after progress: reading the clock costs
  // about as much as a pass, so it is read every 16 passes and not at all by short waits.
  Clock::time_point idle_since{};
  unsigned passes = 0;
  bool went_long = false;  // idle for kHomeAfter at some point: go home when the wait ends
  Sleeper sleeper;
  while (!c.finished()) {
    bool progressed = progress();
    if (c.finished()) break;
    if (progressed) {
      sleeper.release();
      idle_since = Clock::time_point{};
      passes = 0;
      continue;
    }
    if (++passes % 16 != 0 && !oversubscribed_) continue;
    const auto now = Clock::now();
    if (idle_since == Clock::time_point{}) idle_since = now;
    const auto idle = now - idle_since;
    if (idle < spin_for) continue;
    if (idle_hook_) idle_hook_();
    // Where ranks share cores, yielding through a long wait takes the core from the rank that
    // is copying (4 ranks on 2 cores, 32 MiB gather: 17,000 sched_yield calls a call, and the
    // root got a quarter of a core); sleeping hands it over (1.2-2.3x faster side by side).
    if (idle < kYieldFor && !(oversubscribed_ && long_wait(c))) {
      sched_yield();
      continue;
    }
    const bool long_idle = idle >= kHomeAfter;
    went_long = went_long || long_idle;
    sleep(sleeper, long_idle);
  }
  // The ranks sleeping with this one may all have woken on one core.
  if (went_long) detail::return_home();
}

bool Scheduler::long_wait(const Collective &c) const {
  // Only the one collective in flight: a sleep on its flag would hold up the others' progress.
  if (!c.blocked_long() || active_.size() != 1) return false;
  return !others_ || !others_();
}

void Scheduler::sleep(Sleeper &sleeper, bool long_idle) {
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
    sleeper.sleep(*flag, kSleepMs * 1000L, long_idle);
  } else {
    sleeper.release();
    try {
      transport_.wait(kSleepMs);
    } catch (const detail::Failure &f) {
      for (auto &a : active_) a->abort(f.code(), f.message());
    }
  }
}

}  // namespace braid::coll
