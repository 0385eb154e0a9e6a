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

#include "p2p_endpoint.hpp"
#include "plugin/plugin_loader.hpp"

namespace {

using braid_bench::p2p::Command;
using braid_bench::p2p::Endpoint;
using braid_bench::p2p::Kind;
using braid_bench::p2p::kMaxBytes;
using braid_bench::p2p::kMinBytes;
using braid_bench::p2p::window_for;

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
