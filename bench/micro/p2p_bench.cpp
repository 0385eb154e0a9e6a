// braid-micro-p2p: point-to-point ping-pong latency and streaming bandwidth of every transport
// plugin, driving the plugin ABI (include/braid/transport.h) directly, for messages of 8 B to
// 4 MiB. Google Benchmark; see bench/README.md ("Micro benchmarks") for the method.
//
//   braid-micro-p2p [--transports=ucx,verbs] [--benchmark_filter=pingpong] ...
//
// Two processes, one command: the program forks one peer process per plugin before any plugin
// is initialized, and the two processes bootstrap the plugin over a socketpair (a 2-rank
// braid_bootstrap_t: allgather and barrier over an AF_UNIX stream). No launcher, no network
// address, nothing but this host. The parent (rank 0) runs Google Benchmark; before each
// benchmark run it tells the peer over the same socketpair what to do and for how many
// iterations (Google Benchmark fixes a run's iteration count before the timed loop), and after
// the run the peer reports its status. Plugins are found and opened exactly as braid finds
// them (braid::detail::discover_plugins / open_plugin: next to the binary's ../lib, the
// install libdir, BRAID_PLUGIN_PATH), and, as braid does, messages are sent without memory
// registrations (a NULL mr).
//
// pingpong/<plugin>/<bytes>: one iteration is a round trip: rank 0 posts its receive and sends
// <bytes>; rank 1 receives and sends the same size back (osu_latency's pattern). Time is the
// round trip; the one_way counter is half of it (shown with a time unit; seconds in JSON), and
// one_way_typical half the median round trip (perftest's t_typical: the mean counts the rare
// slow iteration of a shared or emulated machine, the median does not), in seconds.
// stream/<plugin>/<bytes>: one iteration is a window of W back-to-back sends of <bytes> from
// rank 0 into W distinct receive slots on rank 1, which then returns a 4-byte ack (osu_bw's
// pattern); W = 64, or fewer so that W * bytes <= 16 MiB (4 at 4 MiB). bytes_per_second is
// the payload rate; msg_rate is messages per second.
#include <benchmark/benchmark.h>
#include <braid/braid.h>
#include <braid/transport.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "memory/plugin_numa_args.hpp"
#include "memory/topology.hpp"
#include "plugin/plugin_loader.hpp"

namespace {

constexpr int64_t kMinBytes = 8;
constexpr int64_t kMaxBytes = 4 << 20;
constexpr size_t kWindowBytes = 16 << 20;  // the receive slots of one stream window
constexpr size_t kMaxWindow = 64;
constexpr uint64_t kDataTag = 1;
constexpr uint64_t kAckTag = 2;
constexpr size_t kAckBytes = 4;
constexpr double kTimeoutS = 60;  // a peer silent this long is treated as dead
constexpr auto kSpinFor = std::chrono::microseconds(50);

size_t window_for(size_t bytes) {
  return std::clamp<size_t>(kWindowBytes / bytes, 1, kMaxWindow);
}

// ---- the socketpair: exact reads and writes ----------------------------------------------

bool write_all(int fd, const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void *data, size_t n) {
  char *p = static_cast<char *>(data);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;  // 0: the other process closed its end (exited)
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// ---- a 2-rank bootstrap over the socketpair, as the plugin ABI wants it ---------------------

struct PairBootstrap {
  int fd;
  int rank;
};

int pair_allgather(void *ctx, const void *in, void *out, size_t bytes) {
  const auto *b = static_cast<const PairBootstrap *>(ctx);
  auto *o = static_cast<unsigned char *>(out);
  unsigned char *mine = o + static_cast<size_t>(b->rank) * bytes;
  unsigned char *theirs = o + static_cast<size_t>(1 - b->rank) * bytes;
  if (bytes > 0 && in != mine) std::memmove(mine, in, bytes);
  const uint64_t my_size = bytes;
  uint64_t their_size = 0;
  // Rank 0 writes first and rank 1 reads first, so neither waits on a full socket buffer.
  auto send = [&] {
    return write_all(b->fd, &my_size, sizeof my_size) && write_all(b->fd, mine, bytes);
  };
  auto receive_size = [&] { return read_all(b->fd, &their_size, sizeof their_size); };
  if (b->rank == 0) {
    if (!send() || !receive_size()) return BRAID_ERR_BOOTSTRAP;
  } else {
    if (!receive_size()) return BRAID_ERR_BOOTSTRAP;
  }
  if (their_size != my_size) return BRAID_ERR_MISMATCH;  // both sides see it; stream is dead
  if (!read_all(b->fd, theirs, bytes)) return BRAID_ERR_BOOTSTRAP;
  if (b->rank == 1 && !send()) return BRAID_ERR_BOOTSTRAP;
  return BRAID_SUCCESS;
}

int pair_barrier(void *ctx) {
  const unsigned char in = 0;
  unsigned char out[2];
  return pair_allgather(ctx, &in, out, 1);
}

void plugin_log(int level, const char *msg) {
  if (level <= 0) std::fprintf(stderr, "braid-micro-p2p: plugin warning: %s\n", msg);
}

// ---- commands from rank 0 to rank 1 ------------------------------------------------------

enum class Kind : uint32_t { pingpong = 1, stream = 2, quit = 3 };

struct Command {
  Kind kind;
  uint32_t window;
  uint64_t bytes;
  uint64_t iterations;
};

struct Reply {
  int32_t status;  // BRAID_SUCCESS or the first error
  char message[252];
};

// ---- one side of a plugin's 2-process job --------------------------------------------------

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<unsigned char, FreeDeleter>;

Buffer allocate(size_t bytes) {
  void *p = nullptr;
  if (posix_memalign(&p, 4096, bytes) != 0) return nullptr;
  std::memset(p, 0x5a, bytes);  // fault the pages in before any timing
  return Buffer(static_cast<unsigned char *>(p));
}

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
  int64_t counter(const char *name) {
    braid_transport_counter_t all[64];
    size_t n = 64;
    if (ops_->counters == nullptr || ops_->counters(ctx_, all, &n) != BRAID_SUCCESS) return -1;
    for (size_t i = 0; i < std::min<size_t>(n, 64); ++i)
      if (std::strcmp(all[i].name, name) == 0) return static_cast<int64_t>(all[i].value);
    return -1;
  }

  // Opens, probes and initializes the plugin (collectively with the other process).
  bool start() {
    detail_plugin_ = std::make_unique<braid::detail::Plugin>();
    std::string why;
    if (!braid::detail::open_plugin(name_, detail_plugin_.get(), &why))
      return fail_with("cannot load: " + why);
    ops_ = detail_plugin_->ops;
    char reason[256] = {0};
    if (ops_->probe != nullptr && ops_->probe(reason, sizeof reason) == 0) {
      not_usable_ = true;
      return fail_with(std::string("not usable here: ") + reason);
    }
    braid_bootstrap_t bs{&boot_, boot_.rank, 2, pair_allgather, pair_barrier};
    braid_transport_init_args_t args{};
    args.bootstrap = &bs;
    args.local_rank = boot_.rank;
    args.local_size = 2;
    args.timeout_s = kTimeoutS;
    args.err = err_;
    args.err_len = sizeof err_;
    args.log = plugin_log;
    braid::detail::fill_numa_args(&args, braid::detail::Topology::get().bound_node());
    if (int rc = ops_->init(&args, &ctx_); rc != BRAID_SUCCESS) {
      ctx_ = nullptr;
      return fail_with("init failed (" + std::to_string(rc) + "): " + err_);
    }
    if (ops_->get_properties(ctx_, &props_) != BRAID_SUCCESS)
      return fail_with(std::string("get_properties failed: ") + err_);
    if (props_.max_message == 0) props_.max_message = size_t{1} << 30;
    send_buf_ = allocate(kMaxBytes);
    recv_buf_ = allocate(kWindowBytes);
    if (!send_buf_ || !recv_buf_) return fail_with("out of memory");
    return true;
  }

  // Rank 0: one ping-pong round trip. Rank 1 runs the mirror image in serve().
  bool round_trip(size_t bytes) {
    braid_transport_req_t reqs[2];
    return post_recv(kDataTag, recv_buf_.get(), bytes, &reqs[0]) &&
           post_send(kDataTag, send_buf_.get(), bytes, &reqs[1]) && wait_all(reqs, 2);
  }

  // Rank 0: one window of sends, then the ack.
  bool send_window(size_t bytes, size_t window) {
    braid_transport_req_t reqs[kMaxWindow + 1];
    if (!post_recv(kAckTag, recv_buf_.get(), kAckBytes, &reqs[window])) return false;
    for (size_t i = 0; i < window; ++i)
      if (!post_send(kDataTag, send_buf_.get(), bytes, &reqs[i])) return false;
    return wait_all(reqs, window + 1);
  }

  // Rank 0: tells rank 1 what the next run is.
  bool command(const Command &c) {
    if (!write_all(boot_.fd, &c, sizeof c)) return fail_with("the peer process is gone");
    return true;
  }
  // Rank 0: rank 1's status after the run.
  bool await_reply() {
    Reply reply{};
    if (!read_all(boot_.fd, &reply, sizeof reply)) return fail_with("the peer process is gone");
    if (reply.status != BRAID_SUCCESS)
      return fail_with(std::string("peer: ") +
                       std::string(reply.message, strnlen(reply.message, sizeof reply.message)));
    return true;
  }

  // Rank 1: executes commands until quit. Returns the process exit status.
  int serve() {
    for (;;) {
      Command c{};
      if (!read_all(boot_.fd, &c, sizeof c)) return 1;  // rank 0 exited without quit
      bool ok = true;
      if (c.kind == Kind::pingpong) {
        for (uint64_t i = 0; ok && i < c.iterations; ++i) ok = echo(c.bytes);
      } else if (c.kind == Kind::stream) {
        for (uint64_t i = 0; ok && i < c.iterations; ++i) ok = receive_window(c.bytes, c.window);
      }
      Reply reply{};
      reply.status = ok ? BRAID_SUCCESS : BRAID_ERR_TRANSPORT;
      std::snprintf(reply.message, sizeof reply.message, "%s", error_.c_str());
      if (!write_all(boot_.fd, &reply, sizeof reply)) return 1;
      if (c.kind == Kind::quit) return 0;
      if (!ok) return 1;
    }
  }

 private:
  bool fail_with(const std::string &message) {
    if (error_.empty()) error_ = message;
    return false;
  }

  bool post_send(uint64_t tag, const void *buf, size_t bytes, braid_transport_req_t *req) {
    if (int rc = ops_->isend(ctx_, 1 - boot_.rank, tag, buf, bytes, nullptr, req); rc != 0)
      return fail_with("isend of " + std::to_string(bytes) + " bytes: " + err_);
    return true;
  }
  bool post_recv(uint64_t tag, void *buf, size_t bytes, braid_transport_req_t *req) {
    if (int rc = ops_->irecv(ctx_, 1 - boot_.rank, tag, buf, bytes, nullptr, req); rc != 0)
      return fail_with("irecv of " + std::to_string(bytes) + " bytes: " + err_);
    return true;
  }

  // Progresses until every request completed; reqs[i] is set to nullptr as each completes.
  // Spins, as osu_latency does; but after kSpinFor without a completion it yields the core on
  // every pass (like braid's own scheduler), so that when another process shares a core with
  // one of the pair the peer gets to run instead of waiting out a whole time slice. A
  // sched_yield with nothing else runnable returns at once, so an idle machine measures the
  // same either way. The clock is read only after 1024 passes without a completion (for the
  // deadline and kSpinFor): in a TCG guest a clock read is an emulated HPET access of
  // microseconds, and reading it per message made every plugin look slower than perftest,
  // which reads the TSC.
  bool wait_all(braid_transport_req_t *reqs, size_t n) {
    using Clock = std::chrono::steady_clock;
    size_t pending = n;
    uint64_t passes = 0;
    bool idle_clock_started = false;
    Clock::time_point idle_since;
    bool yielding = false;
    while (pending > 0) {
      if (ops_->progress(ctx_) != BRAID_SUCCESS) return fail_with(std::string("progress: ") + err_);
      bool completed = false;
      for (size_t i = 0; i < n; ++i) {
        if (reqs[i] == nullptr) continue;
        int done = 0;
        if (ops_->test(ctx_, reqs[i], &done, nullptr) != BRAID_SUCCESS) {
          reqs[i] = nullptr;
          return fail_with(std::string("request failed: ") + err_);
        }
        if (done) {
          reqs[i] = nullptr;
          --pending;
          completed = true;
        }
      }
      if (pending == 0) break;
      if (completed) {
        passes = 0;
        yielding = false;
        idle_clock_started = false;
        continue;
      }
      if (yielding) {
        sched_yield();
      } else if (++passes % 1024 != 0) {
        continue;
      }
      const auto now = Clock::now();
      if (!idle_clock_started) {
        idle_clock_started = true;
        idle_since = now;
        continue;
      }
      const auto idle = now - idle_since;
      if (idle > std::chrono::duration<double>(kTimeoutS))
        return fail_with("no progress for " + std::to_string(kTimeoutS) + " s");
      yielding = idle > kSpinFor;
    }
    return true;
  }

  bool echo(size_t bytes) {
    braid_transport_req_t req;
    if (!post_recv(kDataTag, recv_buf_.get(), bytes, &req) || !wait_all(&req, 1)) return false;
    return post_send(kDataTag, recv_buf_.get(), bytes, &req) && wait_all(&req, 1);
  }

  bool receive_window(size_t bytes, size_t window) {
    braid_transport_req_t reqs[kMaxWindow];
    for (size_t i = 0; i < window; ++i)
      if (!post_recv(kDataTag, recv_buf_.get() + i * bytes, bytes, &reqs[i])) return false;
    if (!wait_all(reqs, window)) return false;
    braid_transport_req_t ack;
    return post_send(kAckTag, send_buf_.get(), kAckBytes, &ack) && wait_all(&ack, 1);
  }

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

// ---- the benchmarks (rank 0) ------------------------------------------------------------

// Runs one Google Benchmark run: tells the peer, times `step` per iteration, collects the
// peer's status. A failure marks the plugin broken; its later benchmarks are skipped.
// `sends`: messages rank 0 sends per iteration. Where the plugin writes eager messages straight
// into advertised receives (verbs, BRAID_VERBS_DIRECT), the share of rank 0's that went so is
// reported as `direct`; where it sends them without a header (verbs), that share as
// `headerless`.
template <typename Step>
void run(benchmark::State &state, Endpoint *ep, Kind kind, size_t window, Step step, double sends) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const int64_t direct0 = ep->counter("direct_msgs");
  const int64_t headerless0 = ep->counter("headerless_msgs");
  if (ep->broken()) return state.SkipWithError(("skipped: " + ep->error()).c_str());
  if (bytes > ep->max_message()) return state.SkipWithError("larger than the plugin's max_message");
  const Command c{kind, static_cast<uint32_t>(window), bytes,
                  static_cast<uint64_t>(state.max_iterations)};
  if (!ep->command(c)) return state.SkipWithError(ep->error().c_str());
  bool ok = true;
  for (auto _ : state) {
    if (!step(bytes)) {
      ok = false;
      break;
    }
  }
  // On failure the peer may still wait for messages that never come; it gives up after
  // kTimeoutS and replies, or is killed at exit.
  if (!ok) return state.SkipWithError(ep->error().c_str());
  if (!ep->await_reply()) return state.SkipWithError(ep->error().c_str());
  if (direct0 >= 0 && state.iterations() > 0)
    state.counters["direct"] = static_cast<double>(ep->counter("direct_msgs") - direct0) /
                               (sends * static_cast<double>(state.iterations()));
  if (headerless0 >= 0 && state.iterations() > 0)
    state.counters["headerless"] =
        static_cast<double>(ep->counter("headerless_msgs") - headerless0) /
        (sends * static_cast<double>(state.iterations()));
}

// A timestamp for single iterations: the time-stamp counter where there is one, as perftest
// reads it (in a TCG guest clock_gettime is an emulated HPET access of microseconds, which per
// iteration would be part of what is measured); its rate is taken from the steady clock over
// the whole run.
uint64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

void bm_pingpong(benchmark::State &state, Endpoint *ep) {
  using Clock = std::chrono::steady_clock;
  std::vector<uint64_t> trips;
  trips.reserve(static_cast<size_t>(std::min<int64_t>(state.max_iterations, int64_t{1} << 22)));
  const Clock::time_point t0 = Clock::now();
  const uint64_t c0 = ticks();
  run(
      state, ep, Kind::pingpong, 0,
      [ep, &trips](size_t bytes) {
        const uint64_t start = ticks();
        const bool ok = ep->round_trip(bytes);
        if (trips.size() < trips.capacity()) trips.push_back(ticks() - start);
        return ok;
      },
      1);
  const uint64_t c1 = ticks();
  const double elapsed_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  // Seconds per one-way message: the inverse of the rate of 2 messages per iteration.
  state.counters["one_way"] =
      benchmark::Counter(2.0 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  if (trips.empty() || c1 <= c0) return;
  auto mid = trips.begin() + static_cast<std::ptrdiff_t>(trips.size() / 2);
  std::nth_element(trips.begin(), mid, trips.end());
  const double ns_per_tick = elapsed_ns / static_cast<double>(c1 - c0);
  state.counters["one_way_typical"] = static_cast<double>(*mid) * ns_per_tick / 2 * 1e-9;
}

void bm_stream(benchmark::State &state, Endpoint *ep) {
  const size_t window = window_for(static_cast<size_t>(state.range(0)));
  run(
      state, ep, Kind::stream, window,
      [ep, window](size_t bytes) { return ep->send_window(bytes, window); },
      static_cast<double>(window));
  const double messages = static_cast<double>(state.iterations()) * static_cast<double>(window);
  state.SetBytesProcessed(static_cast<int64_t>(messages) * state.range(0));
  state.counters["msg_rate"] = benchmark::Counter(messages, benchmark::Counter::kIsRate);
  state.counters["window"] = static_cast<double>(window);
}

struct Peer {
  std::unique_ptr<Endpoint> endpoint;
  pid_t pid = -1;
};

std::vector<std::string> split(const std::string &list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::string> wanted;
  bool have_filter = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--transports=", 0) == 0) {
      wanted = split(arg.substr(13));
      have_filter = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  std::vector<std::string> names = braid::detail::discover_plugins();
  if (have_filter) {
    for (const std::string &w : wanted)
      if (std::find(names.begin(), names.end(), w) == names.end()) {
        std::fprintf(stderr, "braid-micro-p2p: --transports: no plugin '%s' found\n", w.c_str());
        return 2;
      }
    names = wanted;
  }
  if (names.empty()) {
    std::fprintf(stderr, "braid-micro-p2p: no transport plugin found (searched:");
    for (const std::string &dir : braid::detail::plugin_search_dirs())
      std::fprintf(stderr, " %s", dir.c_str());
    std::fprintf(stderr, ")\n");
    return 1;
  }

  // Every peer is forked before this process initializes any plugin, so no child inherits a
  // live transport context.
  std::fflush(nullptr);
  std::vector<Peer> peers;
  std::vector<int> parent_fds;
  for (const std::string &name : names) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      std::perror("braid-micro-p2p: socketpair");
      return 1;
    }
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("braid-micro-p2p: fork");
      return 1;
    }
    if (pid == 0) {
      for (int fd : parent_fds) close(fd);
      close(fds[0]);
      int status = 1;
      {
        Endpoint ep(name, fds[1], 1);
        if (ep.start()) status = ep.serve();
        // The reason is printed by rank 0, which sees the same plugin fail.
      }
      std::fflush(nullptr);
      _exit(status);
    }
    close(fds[1]);
    parent_fds.push_back(fds[0]);
    peers.push_back(Peer{std::make_unique<Endpoint>(name, fds[0], 0), pid});
  }

  int usable = 0;
  int status = 0;
  for (Peer &peer : peers) {
    Endpoint &ep = *peer.endpoint;
    if (!ep.start()) {
      std::fprintf(stderr, "braid-micro-p2p: transport %s: %s\n", ep.name().c_str(),
                   ep.error().c_str());
      if (!ep.not_usable()) status = 1;
      continue;
    }
    ++usable;
    benchmark::RegisterBenchmark(("pingpong/" + ep.name()).c_str(), bm_pingpong, &ep)
        ->RangeMultiplier(2)
        ->Range(kMinBytes, kMaxBytes)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("stream/" + ep.name()).c_str(), bm_stream, &ep)
        ->RangeMultiplier(2)
        ->Range(kMinBytes, kMaxBytes)
        ->UseRealTime();
  }
  if (usable > 0)
    benchmark::RunSpecifiedBenchmarks();
  else
    std::fprintf(stderr, "braid-micro-p2p: no usable transport plugin; nothing measured\n");
  benchmark::Shutdown();
  if (usable == 0) status = 1;

  // Quit every peer (both sides finalize after the peer has seen the quit, like braid's
  // barrier before finalize), then reap it; a peer stuck after an error is killed.
  for (Peer &peer : peers) {
    Endpoint &ep = *peer.endpoint;
    if (ep.broken() && !ep.not_usable()) {
      // Failed at init (reported above) or during a run (reported by Google Benchmark).
      status = 1;
    }
    bool clean = false;
    if (!ep.broken() && ep.command(Command{Kind::quit, 0, 0, 0})) clean = ep.await_reply();
    peer.endpoint.reset();  // finalize
    if (!clean) kill(peer.pid, SIGKILL);
    int wstatus = 0;
    while (waitpid(peer.pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (clean && !(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)) status = 1;
  }
  return status;
}
