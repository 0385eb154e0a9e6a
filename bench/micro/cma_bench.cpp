// braid-micro-cma: what a single copy through cross-memory attach (process_vm_readv, the CMA of
// Open MPI's and MPICH's shared-memory transports, and of braid's node-local single copy,
// collectives/intranode/single_copy.hpp) costs on this machine, next to memcpy.
//
//   cma_read/<bytes>/<chunk>   process_vm_readv of <bytes> from a peer process, <chunk> bytes
//                              per call, into a buffer of <chunk> bytes (stays in cache)
//   cma_read_after_pause/<bytes>/<pause_us>
//                              one process_vm_readv of <bytes> into a buffer of <bytes>, after
//                              <pause_us> us of spinning (not timed): how a path's cost depends
//                              on how lately it ran, which CopyChooser's retries must allow for
//   memcpy/<bytes>             memcpy of <bytes> between two buffers of this process
//
// The peer is forked at start; it allocates and writes its own buffer (its own pages, not pages
// shared copy-on-write with this process), sends the address through a pipe and waits.
// bytes_per_second is <bytes> per iteration.
#include <benchmark/benchmark.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

constexpr size_t kMaxBytes = size_t{64} << 20;

struct Peer {
  pid_t pid = -1;
  uintptr_t buffer = 0;
  int stop_fd = -1;
};
Peer g_peer;

struct Free {
  void operator()(void *p) const { std::free(p); }
};
using Bytes = std::unique_ptr<char, Free>;
Bytes page_aligned(size_t bytes) {
  auto *p = static_cast<char *>(std::aligned_alloc(4096, bytes));
  if (p != nullptr) std::memset(p, 1, bytes);
  return Bytes(p);
}

bool start_peer() {
  int to_parent[2], to_child[2];
  if (pipe(to_parent) != 0 || pipe(to_child) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    close(to_child[1]);  // so that the parent closing its end is EOF here
    close(to_parent[0]);
    Bytes mine = page_aligned(kMaxBytes);
    const auto addr = reinterpret_cast<uintptr_t>(mine.get());
    if (write(to_parent[1], &addr, sizeof addr) != sizeof addr) _exit(1);
    char c;
    while (read(to_child[0], &c, 1) < 0 && errno == EINTR) {
    }
    _exit(0);
  }
  close(to_parent[1]);
  close(to_child[0]);
  g_peer.pid = pid;
  g_peer.stop_fd = to_child[1];
  return read(to_parent[0], &g_peer.buffer, sizeof g_peer.buffer) == sizeof g_peer.buffer &&
         g_peer.buffer != 0;
}

void bm_cma_read(benchmark::State &state) {
  const auto bytes = static_cast<size_t>(state.range(0));
  const auto chunk = static_cast<size_t>(state.range(1));
  Bytes dst = page_aligned(chunk);
  for (auto _ : state) {
    for (size_t off = 0; off < bytes; off += chunk) {
      iovec local{dst.get(), chunk};
      iovec remote{reinterpret_cast<void *>(g_peer.buffer + off), chunk};
      if (process_vm_readv(g_peer.pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(chunk))
        return state.SkipWithError("process_vm_readv failed (ptrace permission, seccomp?)");
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void bm_cma_read_after_pause(benchmark::State &state) {
  using Clock = std::chrono::steady_clock;
  const auto bytes = static_cast<size_t>(state.range(0));
  const auto pause = std::chrono::microseconds(state.range(1));
  Bytes dst = page_aligned(bytes);
  for (auto _ : state) {
    // Spinning, not sleeping: the core stays busy, so what fades is not a sleeping core's.
    for (const auto until = Clock::now() + pause; Clock::now() < until;) {
    }
    iovec local{dst.get(), bytes};
    iovec remote{reinterpret_cast<void *>(g_peer.buffer), bytes};
    const auto start = Clock::now();
    if (process_vm_readv(g_peer.pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(bytes))
      return state.SkipWithError("process_vm_readv failed (ptrace permission, seccomp?)");
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void bm_memcpy(benchmark::State &state) {
  const auto bytes = static_cast<size_t>(state.range(0));
  Bytes src = page_aligned(bytes), dst = page_aligned(bytes);
  for (auto _ : state) {
    std::memcpy(dst.get(), src.get(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

}  // namespace

int main(int argc, char **argv) {
  if (!start_peer()) {
    std::fprintf(stderr, "braid-micro-cma: cannot start the peer process\n");
    return 1;
  }
  for (int64_t bytes : {int64_t{256} << 10, int64_t{4} << 20, int64_t{64} << 20}) {
    for (int64_t chunk : {int64_t{64} << 10, int64_t{256} << 10})
      benchmark::RegisterBenchmark("cma_read", bm_cma_read)->Args({bytes, chunk});
    benchmark::RegisterBenchmark("memcpy", bm_memcpy)->Arg(bytes);
  }
  for (int64_t pause : {0, 300, 1000, 3000, 10000})
    benchmark::RegisterBenchmark("cma_read_after_pause", bm_cma_read_after_pause)
        ->Args({int64_t{2} << 20, pause})
        ->UseManualTime();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  close(g_peer.stop_fd);
  waitpid(g_peer.pid, nullptr, 0);
  return 0;
}
