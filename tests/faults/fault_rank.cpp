// One rank of a fault scenario, chosen by BRAID_FAULT (see fault_test.cpp, which starts the
// ranks by hand through the environment contract or under braidrun and checks what they print).
// Every rank prints machine-readable lines on stdout:
//   KILL t=<ns>                        the victim, just before it SIGKILLs itself
//   RESULT code=<n> t=<ns> calls=<n> msg=<braid_last_error()>
//   LATER code=<n> dt=<ns> msg=...     the call after a failure (must fail at once)
// t is CLOCK_MONOTONIC (the same clock in every process of the host).
#include <braid/braid.h>

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int env_int(const char *name, int fallback) {
  const char *v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

void result(braid_result_t rc, long long calls) {
  std::printf("RESULT code=%d t=%lld calls=%lld msg=%s\n", static_cast<int>(rc), now_ns(), calls,
              rc == BRAID_SUCCESS ? "" : braid_last_error());
  std::fflush(stdout);
}

// A rank that survives a peer's death must see every later call fail at once as well.
void later_call(braid_comm_t world) {
  int v = 1;
  const long long t0 = now_ns();
  braid_result_t rc = braid_allreduce(&v, &v, 1, BRAID_INT32, BRAID_SUM, world);
  std::printf("LATER code=%d dt=%lld msg=%s\n", static_cast<int>(rc), now_ns() - t0,
              rc == BRAID_SUCCESS ? "" : braid_last_error());
  std::fflush(stdout);
}

// kill: rank BRAID_FAULT_VICTIM kills itself with SIGKILL after a random delay while every
// rank runs allreduce and broadcast over several sizes; the others report their error.
// BRAID_FAULT_LARGE=1: sizes of 4-12 MiB only, so that on fake nodes the victim dies inside the
// hierarchical algorithms' segment pipeline.
int kill_scenario(braid_comm_t world, int rank, int size) {
  const int victim = env_int("BRAID_FAULT_VICTIM", size - 1);
  const unsigned seed = static_cast<unsigned>(env_int("BRAID_FAULT_SEED", 1));
  std::mt19937 rng(seed * 7919u + static_cast<unsigned>(rank));
  if (rank == victim) {
    const int delay_ms = std::uniform_int_distribution<int>(100, 600)(rng);
    std::thread([delay_ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      std::printf("KILL t=%lld\n", now_ns());
      std::fflush(stdout);
      raise(SIGKILL);
    }).detach();
  }
  static const size_t kCounts[] = {1, 1000, 65536, 1 << 20};
  static const size_t kLargeCounts[] = {1 << 20, (3 << 20) + 5, (2 << 20) + 1, 3 << 20};
  const bool large = env_int("BRAID_FAULT_LARGE", 0) == 1;
  std::vector<float> buf(large ? (3 << 20) + 5 : 1 << 20, 1.0f);
  long long calls = 0;
  for (;;) {
    const size_t count = large ? kLargeCounts[calls % 4] : kCounts[calls % 4];
    braid_result_t rc =
        (calls / 4) % 2 == 0
            ? braid_allreduce(buf.data(), buf.data(), count, BRAID_FLOAT32, BRAID_MAX, world)
            : braid_broadcast(buf.data(), count, BRAID_FLOAT32, static_cast<int>(calls % size),
                              world);
    ++calls;
    if (rc != BRAID_SUCCESS) {
      result(rc, calls);
      later_call(world);
      return 0;
    }
  }
}

// mismatch-<what>: after one good allreduce, the last rank calls something else than the
// others (allgatherv, alltoallv: expects another count from rank 0 than rank 0 sends it); then
// every rank calls a barrier (a rank whose part completed learns of it there).
int mismatch_scenario(braid_comm_t world, int rank, int size, const std::string &what) {
  std::printf("START t=%lld\n", now_ns());  // the test times the scenario, not process start
  std::fflush(stdout);
  int v = 1;
  if (braid_allreduce(&v, &v, 1, BRAID_INT32, BRAID_SUM, world) != BRAID_SUCCESS) {
    result(BRAID_ERR_INTERNAL, 0);
    return 1;
  }
  const bool odd = rank == size - 1;
  std::vector<float> buf(1000, 1.0f);
  // Past what travels with the call records (the windows or single copy move the data).
  constexpr size_t kLarge = 8192;
  std::vector<float> large(kLarge * static_cast<size_t>(size) * 2, 1.0f);
  float *large_recv = large.data() + kLarge * static_cast<size_t>(size);
  braid_result_t rc = BRAID_SUCCESS;
  if (what == "count")
    rc = braid_allreduce(buf.data(), buf.data(), odd ? 200 : 100, BRAID_FLOAT32, BRAID_SUM, world);
  else if (what == "count_late" || what == "count_late_on") {
    // The ranks in between come 3 s late, when the others have found the disagreement (and,
    // with BRAID_FAULT_EXIT, left): they must be told of it, not of the ranks that left.
    if (rank != 0 && !odd) std::this_thread::sleep_for(std::chrono::seconds(3));
    rc = braid_allreduce(buf.data(), buf.data(), odd ? 200 : 100, BRAID_FLOAT32, BRAID_SUM, world);
    // _on: every rank carries on with another call on the same communicator. The late ones ran
    // call #1 as the others had (and failed it the same way), so the communicator is still in
    // step: the next call works on every rank.
    if (what == "count_late_on" && rc == BRAID_ERR_MISMATCH) {
      const std::string first = braid_last_error();
      int one = 1;
      const braid_result_t later = braid_allreduce(&one, &one, 1, BRAID_INT32, BRAID_SUM, world);
      const bool as_expected = later == BRAID_SUCCESS && one == size;
      std::printf("RESULT code=%d t=%lld calls=2 msg=%s%s\n",
                  static_cast<int>(as_expected ? rc : BRAID_ERR_INTERNAL), now_ns(),
                  as_expected ? "" : "the call after the mismatch: ",
                  as_expected ? first.c_str()
                              : (later == BRAID_SUCCESS ? "wrong sum" : braid_last_error()));
      std::fflush(stdout);
      return 0;
    }
  } else if (what == "dtype")
    rc = braid_allreduce(buf.data(), buf.data(), 100, odd ? BRAID_INT32 : BRAID_FLOAT32, BRAID_SUM,
                         world);
  else if (what == "op")
    rc = braid_allreduce(buf.data(), buf.data(), 100, BRAID_FLOAT32, odd ? BRAID_MAX : BRAID_SUM,
                         world);
  else if (what == "kind")
    rc = odd ? braid_broadcast(buf.data(), 100, BRAID_FLOAT32, 0, world)
             : braid_allreduce(buf.data(), buf.data(), 100, BRAID_FLOAT32, BRAID_SUM, world);
  else if (what == "root")  // the odd rank names a root other than itself and rank 0
    rc = braid_broadcast(buf.data(), 100, BRAID_FLOAT32, odd ? 1 : 0, world);
  else if (what == "gather_root")  // small: the non-roots hand their block over and return
    rc = braid_gather(buf.data(), buf.data() + 500, 4, BRAID_FLOAT32, odd ? 1 : 0, world);
  else if (what == "bcast_roots")  // small: rank 0 and the odd rank each think they are the root
    rc = braid_broadcast(buf.data(), 4, BRAID_FLOAT32, odd ? size - 1 : 0, world);
  else if (what == "bcast_roots_run") {
    // The same, then a run of broadcasts from rank 0 and no call that waits for every rank:
    // the roots may run ahead, and must still find the disagreement within a few calls.
    rc = braid_broadcast(buf.data(), 4, BRAID_FLOAT32, odd ? size - 1 : 0, world);
    for (int i = 0; rc == BRAID_SUCCESS && i < 40; ++i)
      rc = braid_broadcast(buf.data(), 4, BRAID_FLOAT32, 0, world);
  } else if (what == "root_large")
    rc = braid_broadcast(large.data(), kLarge, BRAID_FLOAT32, odd ? 1 : 0, world);
  else if (what == "bcast_roots_large")  // the roots do not wait for the others' records
    rc = braid_broadcast(large.data(), kLarge, BRAID_FLOAT32, odd ? size - 1 : 0, world);
  else if (what == "scatter_roots_large")
    rc = braid_scatter(large.data(), large_recv, kLarge, BRAID_FLOAT32, odd ? size - 1 : 0, world);
  else if (what == "reduce_roots")  // small, 2 ranks: each thinks the other is the root
    rc = braid_reduce(buf.data(), buf.data() + 500, 4, BRAID_FLOAT32, BRAID_SUM, 1 - rank, world);
  // The same disagreements on the other collectives: a count, a dtype, an op, a root, and two
  // of the new kinds against each other.
  else if (what == "count_allgather")
    rc = braid_allgather(buf.data(), buf.data() + 500, odd ? 20 : 10, BRAID_FLOAT32, world);
  else if (what == "count_alltoall")
    rc = braid_alltoall(buf.data(), buf.data() + 500, odd ? 20 : 10, BRAID_FLOAT32, world);
  else if (what == "dtype_reduce_scatter")
    rc = braid_reduce_scatter(buf.data(), buf.data() + 500, 10, odd ? BRAID_INT32 : BRAID_FLOAT32,
                              BRAID_SUM, world);
  else if (what == "op_reduce")
    rc = braid_reduce(buf.data(), buf.data() + 500, 10, BRAID_FLOAT32, odd ? BRAID_MAX : BRAID_SUM,
                      0, world);
  else if (what == "root_scatter")
    rc = braid_scatter(buf.data(), buf.data() + 500, 10, BRAID_FLOAT32, odd ? 1 : 0, world);
  else if (what == "kind_new")
    rc = odd ? braid_alltoall(buf.data(), buf.data() + 500, 10, BRAID_FLOAT32, world)
             : braid_allgather(buf.data(), buf.data() + 500, 10, BRAID_FLOAT32, world);
  else if (what == "allgatherv" || what == "alltoallv" || what == "alltoallv_fewer") {
    // Every rank sends 2 elements to each; the odd rank expects 3 from rank 0 (fewer: 1).
    const auto n = static_cast<size_t>(size);
    std::vector<size_t> sc(n, 2), rc_(n, 2), displs(n);
    for (size_t r = 0; r < n; ++r) displs[r] = 3 * r;
    if (odd) rc_[0] = what == "alltoallv_fewer" ? 1 : 3;
    rc = what == "allgatherv"
             ? braid_allgatherv(buf.data(), 2, buf.data() + 500, rc_.data(), displs.data(),
                                BRAID_FLOAT32, world)
             : braid_alltoallv(buf.data(), sc.data(), displs.data(), buf.data() + 500, rc_.data(),
                               displs.data(), BRAID_FLOAT32, world);
  } else if (what == "allgatherv_empty") {
    // Every rank but the odd one expects nothing at all; the odd one sends itself 2 elements,
    // and so to everyone.
    const auto n = static_cast<size_t>(size);
    std::vector<size_t> counts(n, 0), displs(n, 0);
    if (odd) counts[n - 1] = 2;
    rc = braid_allgatherv(odd ? buf.data() : nullptr, odd ? 2 : 0, odd ? buf.data() + 500 : nullptr,
                          counts.data(), displs.data(), BRAID_FLOAT32, world);
  }
  if (rc == BRAID_SUCCESS) rc = braid_barrier(world);
  result(rc, 2);
  // BRAID_FAULT_EXIT=1: leave at once, without braid_finalize, as an application that treats
  // the error as fatal does. The other ranks must still report the disagreement, not a failed
  // rank.
  if (env_int("BRAID_FAULT_EXIT", 0) != 0) _exit(0);
  return 0;
}

// hang: the last rank stays away from collective #1 for twice BRAID_TIMEOUT.
int hang_scenario(braid_comm_t world, int rank, int size) {
  int v = 1;
  if (braid_allreduce(&v, &v, 1, BRAID_INT32, BRAID_SUM, world) != BRAID_SUCCESS) return 1;
  if (rank == size - 1) {
    const char *t = std::getenv("BRAID_TIMEOUT");
    std::this_thread::sleep_for(std::chrono::duration<double>(2 * (t ? std::atof(t) : 2) + 1));
    return 0;
  }
  result(braid_allreduce(&v, &v, 1, BRAID_INT32, BRAID_SUM, world), 1);
  return 0;
}

}  // namespace

int main() {
  // Under braidrun, survivors are sent SIGTERM when a rank dies; they must still report.
  std::signal(SIGTERM, SIG_IGN);
  // BRAID_FAULT_NO_UCX=R: UCX_TLS on rank R names no transport UCX has, so that rank's UCX
  // fails to start while the others' starts.
  const char *no_ucx = std::getenv("BRAID_FAULT_NO_UCX");
  const char *my_rank = std::getenv("BRAID_RANK");
  if (no_ucx != nullptr && my_rank != nullptr && std::atoi(no_ucx) == std::atoi(my_rank))
    setenv("UCX_TLS", "braid_no_such_tl", 1);
  braid_comm_t world = nullptr;
  if (braid_init(nullptr, nullptr, &world) != BRAID_SUCCESS) {
    std::fprintf(stderr, "init failed: %s\n", braid_last_error());
    return 2;
  }
  const int rank = braid_comm_rank(world), size = braid_comm_size(world);
  const char *fault = std::getenv("BRAID_FAULT");
  const std::string scenario = fault ? fault : "";
  // BRAID_FAULT_COMM: run the scenario on a child communicator instead of the world: "dup",
  // or "reversed" (a split whose ranks run backwards, so communicator and world ranks differ).
  const char *on = std::getenv("BRAID_FAULT_COMM");
  const std::string child = on ? on : "";
  braid_comm_t comm = world;
  if (!child.empty()) {
    const braid_result_t made =
        child == "dup" ? braid_comm_dup(world, &comm) : braid_comm_split(world, 0, -rank, &comm);
    if (made != BRAID_SUCCESS) {
      std::fprintf(stderr, "%s failed: %s\n", child.c_str(), braid_last_error());
      return 2;
    }
    // `rank` stays the world rank: the scenario's odd rank is the world's last, which is the
    // reversed child's rank 0.
    world = comm;
  }
  int rc = 3;
  if (scenario == "kill")
    rc = kill_scenario(world, rank, size);
  else if (scenario.rfind("mismatch-", 0) == 0)
    rc = mismatch_scenario(world, rank, size, scenario.substr(9));
  else if (scenario == "hang")
    rc = hang_scenario(world, rank, size);
  else
    std::fprintf(stderr, "unknown BRAID_FAULT '%s'\n", scenario.c_str());
  braid_finalize();
  return rc;
}
