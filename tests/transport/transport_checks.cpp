#include "transport_checks.hpp"

#include <cstdio>
#include <cstring>

#include "comm/transport.hpp"
#include "comm/world.hpp"
#include "config/env_config.hpp"
#include "error.hpp"

namespace braid::transport_test {

using detail::cat;

uint64_t seed(int src, int dst, uint64_t tag) {
  return (uint64_t(src) << 48) ^ (uint64_t(dst) << 32) ^ (tag * 0x9e3779b97f4a7c15ull) ^ 0x5bd1e995;
}

namespace {
// splitmix64 of the word index: every 8-byte word differs, so shifted or swapped data shows.
uint64_t word_at(uint64_t seed, size_t index) {
  uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

void fill(unsigned char *buf, size_t bytes, uint64_t s) {
  size_t words = bytes / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w = word_at(s, i);
    std::memcpy(buf + i * 8, &w, 8);
  }
  if (bytes % 8 == 0) return;  // also keeps a 0-byte (possibly NULL) buffer untouched
  uint64_t w = word_at(s, words);
  std::memcpy(buf + words * 8, &w, bytes % 8);
}

void verify(const unsigned char *buf, size_t bytes, uint64_t s, const std::string &what) {
  size_t words = bytes / 8;
  for (size_t i = 0; i <= words; ++i) {
    uint64_t w = word_at(s, i);
    size_t n = i < words ? 8 : bytes % 8;
    if (n != 0 && std::memcmp(buf + i * 8, &w, n) != 0) {
      size_t off = i * 8;
      while (buf[off] == reinterpret_cast<const unsigned char *>(&w)[off - i * 8]) ++off;
      throw CaseFailure(cat(what, ": wrong data at byte ", off, " of ", bytes, " (got 0x", std::hex,
                            int(buf[off]), ")"));
    }
  }
}

void verify_sentinel(const unsigned char *buf, size_t bytes, const std::string &what) {
  for (size_t i = 0; i < bytes; ++i)
    if (buf[i] != kSentinel) throw CaseFailure(cat(what, ": byte ", i, " was overwritten"));
}

Job::Job(std::unique_ptr<detail::World> world) : world_(std::move(world)) {
  rank_ = world_->config.rank;
  size_ = world_->config.size;
  timeout_s_ = std::min(world_->config.timeout_s, 120.0);
  for (int r = 0; r < size_; ++r)
    if (r != rank_) peers_.push_back(r);
}
Job::~Job() = default;
const braid_transport_props_t &Job::props() const {
  return world_->transport->props();
}
detail::Transport &Job::transport() {
  return *world_->transport;
}
void Job::barrier() {
  world_->bootstrap->barrier();
}

bool Job::run_case(const char *name, const std::function<void()> &body) {
  barrier();  // no case's messages can meet another case's receives
  auto t0 = std::chrono::steady_clock::now();
  std::string why;
  try {
    body();
  } catch (const CaseFailure &f) {
    why = f.what();
  } catch (const detail::Failure &f) {
    why = cat("braid_result_t ", int(f.code()), ": ", f.message());
  }
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!why.empty()) {
    std::printf("FAIL %s: rank %d: %s\n", name, rank_, why.c_str());
    std::fflush(stdout);
    return false;
  }
  std::printf("PASS %s (%.0f ms)\n", name, ms);
  std::fflush(stdout);
  return true;
}

Batch::~Batch() {
  for (Op &op : ops_)
    if (!op.done) job_.transport().cancel(op.req);
}

void Batch::send(int peer, uint64_t tag, const void *buf, size_t bytes) {
  ops_.push_back({job_.transport().isend(peer, tag, buf, bytes), peer, tag, bytes, false, false});
  ++pending_;
}

void Batch::recv(int peer, uint64_t tag, void *buf, size_t capacity, size_t expect) {
  ops_.push_back(
      {job_.transport().irecv(peer, tag, buf, capacity), peer, tag, expect, true, false});
  ++pending_;
}

bool Batch::poll() {
  detail::Transport &t = job_.transport();
  t.progress();
  for (Op &op : ops_) {
    if (op.done) continue;
    size_t got = 0;
    bool done = false;
    try {
      done = t.test(op.req, &got);
    } catch (const detail::Failure &f) {
      op.done = true;  // a failed request is freed by test
      --pending_;
      throw CaseFailure(cat(what_, ": ", op.recv ? "receive from" : "send to", " rank ", op.peer,
                            ", tag ", op.tag, ", ", op.bytes, " B failed: ", f.message()));
    }
    if (!done) continue;
    op.done = true;
    --pending_;
    if (op.recv && got != op.bytes)
      throw CaseFailure(cat(what_, ": receive from rank ", op.peer, ", tag ", op.tag, " got ", got,
                            " B, expected ", op.bytes, " B"));
  }
  return pending_ == 0;
}

void Batch::progress_for(std::chrono::milliseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) poll();
}

void Batch::wait_all() {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(job_.timeout_s());
  while (!poll()) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::string list;
      int shown = 0;
      for (const Op &op : ops_)
        if (!op.done && shown++ < 4)
          list += cat(shown > 1 ? "; " : "", op.recv ? "receive from" : "send to", " rank ",
                      op.peer, " tag ", op.tag, " (", op.bytes, " B)");
      throw CaseFailure(cat(what_, ": ", pending_, " of ", ops_.size(), " requests not done after ",
                            job_.timeout_s(), " s, e.g. ", list));
    }
  }
}

int run_cases(const std::string &filter,
              const std::function<int(Job &, const std::string &)> &cases) {
  std::unique_ptr<detail::World> world;
  try {
    world = detail::create_world(detail::process_env());
  } catch (const detail::Failure &f) {
    std::printf("FAIL setup: %s\n", f.message().c_str());
    return 1;
  }
  Job job(std::move(world));
  const braid_transport_props_t &p = job.props();
  if (job.rank() == 0)
    std::printf("transport %s on %s: eager limit %zu, max message %zu, tag bits %u; %d ranks\n",
                p.name, p.device, p.eager_limit, p.max_message, p.tag_bits, job.size());
  if (job.size() < 2) {
    std::printf("FAIL setup: needs at least 2 ranks (run under braidrun -n 2)\n");
    return 1;
  }
  int rc = cases(job, filter);
  if (rc == 0) {
    job.barrier();
    if (job.rank() == 0) {
      std::printf("counters of rank 0:");
      for (const braid_transport_counter_t &c : job.transport().counters())
        std::printf(" %s=%llu", c.name, static_cast<unsigned long long>(c.value));
      std::printf("\n");
    }
  }
  return rc;
}

uint64_t counter(Job &job, const char *name) {
  for (const braid_transport_counter_t &c : job.transport().counters())
    if (std::string(c.name) == name) return c.value;
  return 0;
}

bool has_counter(Job &job, const char *name) {
  for (const braid_transport_counter_t &c : job.transport().counters())
    if (std::string(c.name) == name) return true;
  return false;
}

}  // namespace braid::transport_test
