// braid-micro-p2p's two processes: one Endpoint per side of a plugin's 2-rank job, joined by a
// socketpair that carries the plugin's bootstrap (allgather, barrier) and rank 0's commands to
// rank 1 (what to run, how often) and rank 1's status back. The benchmarks (p2p_bench.cpp) drive
// rank 0; rank 1 serves.
#pragma once

#include <braid/transport.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "plugin/plugin_loader.hpp"

namespace braid_bench::p2p {

inline constexpr int64_t kMinBytes = 8;
inline constexpr int64_t kMaxBytes = 4 << 20;
inline constexpr size_t kWindowBytes = 16 << 20;  // the receive slots of one stream window
inline constexpr size_t kMaxWindow = 64;

inline size_t window_for(size_t bytes) {
  return std::clamp<size_t>(kWindowBytes / bytes, 1, kMaxWindow);
}

// ---- commands from rank 0 to rank 1 ------------------------------------------------------

enum class Kind : uint32_t { pingpong = 1, stream = 2, quit = 3 };

struct Command {
  Kind kind;
  uint32_t window;
  uint64_t bytes;
  uint64_t iterations;
};

// ---- one side of a plugin's 2-process job --------------------------------------------------

// The socketpair and this side's rank: the plugin's bootstrap context.
struct PairBootstrap {
  int fd;
  int rank;
};

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<unsigned char, FreeDeleter>;

class Endpoint {
 public:
  Endpoint(std::string name, int fd, int rank) : name_(std::move(name)), boot_{fd, rank} {}
  Endpoint(const Endpoint &) = delete;
  Endpoint &operator=(const Endpoint &) = delete;
  ~Endpoint() {
    if (ctx_ != nullptr) ops_->finalize(ctx_);
  }

  const std::string &name() const { return name_; }
  int fd() const { return boot_.fd; }
  const std::string &error() const { return error_; }
  bool broken() const { return !error_.empty(); }
  bool not_usable() const { return not_usable_; }
  size_t max_message() const { return props_.max_message; }
  // This rank's transport counter `name`; -1 when the plugin has none by that name.
  int64_t counter(const char *name);

  // Opens, probes and initializes the plugin (collectively with the other process).
  bool start();

  // Rank 0: one ping-pong round trip. Rank 1 runs the mirror image in serve().
  bool round_trip(size_t bytes);

  // Rank 0: one window of sends, then the ack.
  bool send_window(size_t bytes, size_t window);

  // Rank 0: tells rank 1 what the next run is.
  bool command(const Command &c);
  // Rank 0: rank 1's status after the run.
  bool await_reply();

  // Rank 1: executes commands until quit. Returns the process exit status.
  int serve();

 private:
  bool fail_with(const std::string &message);

  bool post_send(uint64_t tag, const void *buf, size_t bytes, braid_transport_req_t *req);
  bool post_recv(uint64_t tag, void *buf, size_t bytes, braid_transport_req_t *req);

  // Progresses until every request completed; reqs[i] is set to nullptr as each completes.
  // Spins, as osu_latency does; but after kSpinFor without a completion it yields the core on
  // every pass (like braid's own scheduler), so that when another process shares a core with
  // one of the pair the peer gets to run instead of waiting out a whole time slice. A
  // sched_yield with nothing else runnable returns at once, so an idle machine measures the
  // same either way. The clock is read only after 1024 passes without a completion (for the
  // deadline and kSpinFor): in a TCG guest a clock read is an emulated HPET access of
  // microseconds, and reading it per message made every plugin look slower than perftest,
  // which reads the TSC.
  bool wait_all(braid_transport_req_t *reqs, size_t n);

  bool echo(size_t bytes);

  bool receive_window(size_t bytes, size_t window);

  std::string name_;
  PairBootstrap boot_;
  std::unique_ptr<braid::detail::Plugin> detail_plugin_;
  const braid_transport_v1_t *ops_ = nullptr;
  braid_transport_ctx_t ctx_ = nullptr;
  braid_transport_props_t props_{};
  char err_[1024] = {0};
  std::string error_;
  bool not_usable_ = false;  // the probe said no: reported, but not a failure
  Buffer send_buf_, recv_buf_;
};

}  // namespace braid_bench::p2p
