// Communicators used by different threads at the same time (each by one thread at a time):
// every thread runs its own collectives on its own communicator while the others run theirs,
// and every result is checked. The CI's ThreadSanitizer job runs this too.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

// Collectives of several sizes and kinds on `c`, tagged by `salt` so that a message taken by
// the wrong communicator shows as a wrong value.
void work(braid_comm_t c, int salt, int rounds, std::atomic<int> *failures, std::string *why) {
  const int n = braid_comm_size(c), r = braid_comm_rank(c);
  for (int k = 0; k < rounds; ++k) {
    const size_t count = k % 3 == 0 ? 1 : k % 3 == 1 ? 1000 : 40000;
    std::vector<int64_t> v(count, salt * 1000 + r);
    if (braid_allreduce(v.data(), v.data(), count, BRAID_INT64, BRAID_SUM, c) != BRAID_SUCCESS) {
      *why = braid_last_error();
      ++*failures;
      return;
    }
    const int64_t expect = static_cast<int64_t>(salt) * 1000 * n + n * (n - 1) / 2;
    if (v[count - 1] != expect) {
      *why = "allreduce on communicator " + std::to_string(salt) + " gave " +
             std::to_string(v[count - 1]) + ", expected " + std::to_string(expect);
      ++*failures;
      return;
    }
    std::vector<int32_t> all(static_cast<size_t>(n), -1);
    const int32_t mine = salt * 100 + r;
    if (braid_allgather(&mine, all.data(), 1, BRAID_INT32, c) != BRAID_SUCCESS) {
      *why = braid_last_error();
      ++*failures;
      return;
    }
    for (int s = 0; s < n; ++s)
      if (all[static_cast<size_t>(s)] != salt * 100 + s) {
        *why = "allgather on communicator " + std::to_string(salt) + " mixed data";
        ++*failures;
        return;
      }
  }
}

TEST(Threads, CommunicatorsUsedByTwoThreadsAtOnce) {
  braid_comm_t a = nullptr, b = nullptr;
  ASSERT_EQ(braid_comm_dup(world(), &a), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_comm_split(world(), 0, -rank(), &b), BRAID_SUCCESS) << braid_last_error();
  std::atomic<int> failures{0};
  std::string why_a, why_b, why_world;
  std::thread ta(work, a, 1, 60, &failures, &why_a);
  std::thread tb(work, b, 2, 60, &failures, &why_b);
  // The main thread keeps the world busy meanwhile.
  work(world(), 3, 20, &failures, &why_world);
  ta.join();
  tb.join();
  EXPECT_EQ(failures.load(), 0) << why_a << " / " << why_b << " / " << why_world;
  ASSERT_EQ(braid_comm_free(&a), BRAID_SUCCESS);
  ASSERT_EQ(braid_comm_free(&b), BRAID_SUCCESS);
}

// braid_mem_free from one thread while another is inside the transport: the freed region's
// registration must not be released by a second caller inside the plugin at once (debug builds
// abort on that; the CI's ASan job is one, and runs this over the transport with the node path
// off), nor wait for the other thread (it may hold the transport while waiting for the region
// registry, which the free holds).
TEST(Threads, MemoryFreedWhileAnotherThreadIsInTheTransport) {
  braid_comm_t a = nullptr;
  ASSERT_EQ(braid_comm_dup(world(), &a), BRAID_SUCCESS) << braid_last_error();
  std::atomic<int> failures{0};
  std::string why_a, why_main;
  // Regions are freed in bursts of 32, so that the other thread is inside the plugin during
  // some of the frees (the unfixed code aborted in 5 of 6 runs of this size, 2 ranks, node path
  // off, Debug with ASan; it runs in every multi-process variant, so it is kept short).
  std::thread ta(work, a, 1, 240, &failures, &why_a);
  const int n = size();
  constexpr int kBurst = 32;
  for (int k = 0; k < 12 && why_main.empty(); ++k) {
    const size_t count = k % 2 == 0 ? 16 : 8192;  // eager and rendezvous sizes
    std::vector<int64_t *> regions;
    for (int j = 0; j < kBurst; ++j) {
      void *p = nullptr;
      if (braid_mem_alloc(count * sizeof(int64_t), -1, &p) != BRAID_SUCCESS) {
        why_main = braid_last_error();
        break;
      }
      auto *v = static_cast<int64_t *>(p);
      regions.push_back(v);
      for (size_t i = 0; i < count; ++i) v[i] = k + j + rank();
      // Registers the region with the transport (the node path is off in the runs that matter).
      if (braid_allreduce(v, v, count, BRAID_INT64, BRAID_SUM, world()) != BRAID_SUCCESS) {
        why_main = braid_last_error();
        break;
      }
      if (v[count - 1] != int64_t{k + j} * n + n * (n - 1) / 2) {
        why_main = "allreduce in a braid_mem_alloc buffer gave " + std::to_string(v[count - 1]);
        break;
      }
    }
    for (int64_t *v : regions)
      if (braid_mem_free(v) != BRAID_SUCCESS && why_main.empty()) why_main = braid_last_error();
  }
  if (!why_main.empty()) ++failures;
  ta.join();
  EXPECT_EQ(failures.load(), 0) << why_a << " / " << why_main;
  ASSERT_EQ(braid_comm_free(&a), BRAID_SUCCESS);
}

// One thread polls braid_test on its communicator's requests while another thread's blocking
// calls on another communicator idle (a late peer), and so progress the first one's calls too
// (Process::progress_others): the request's outcome must be read only once that thread is done
// with it. ThreadSanitizer saw the poll read a collective that the other thread was finishing.
TEST(Threads, PollingARequestWhileAnotherThreadsWaitProgressesIt) {
  if (size() < 2) GTEST_SKIP() << "needs a peer";
  braid_comm_t a = nullptr, b = nullptr;
  ASSERT_EQ(braid_comm_dup(world(), &a), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_comm_dup(world(), &b), BRAID_SUCCESS) << braid_last_error();
  const int n = size();
  std::string why;
  std::thread poller([&] {
    for (int k = 0; k < 200 && why.empty(); ++k) {
      const size_t count = k % 2 == 0 ? 4 : 20000;
      std::vector<int64_t> v(count, rank() + k);
      braid_request_t q = nullptr;
      if (braid_iallreduce(v.data(), v.data(), count, BRAID_INT64, BRAID_SUM, b, &q) !=
          BRAID_SUCCESS) {
        why = braid_last_error();
        break;
      }
      // Between polls the communicator is free for the other thread's idle wait to take.
      int done = 0;
      while (done == 0 && why.empty()) {
        if (braid_test(&q, &done) != BRAID_SUCCESS) why = braid_last_error();
        if (done == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
      const int64_t expect = static_cast<int64_t>(n) * (n - 1) / 2 + static_cast<int64_t>(n) * k;
      if (why.empty() && v[count - 1] != expect)
        why = "iallreduce #" + std::to_string(k) + " gave " + std::to_string(v[count - 1]);
    }
  });
  // The last rank comes late to each call on a, so the others' waits there idle.
  std::string why_a;
  for (int k = 0; k < 40 && why_a.empty(); ++k) {
    if (rank() == n - 1) std::this_thread::sleep_for(std::chrono::microseconds(500));
    int32_t x = 1;
    if (braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, a) != BRAID_SUCCESS || x != n)
      why_a = braid_last_error();
  }
  poller.join();
  EXPECT_EQ(why, "");
  EXPECT_EQ(why_a, "");
  ASSERT_EQ(braid_comm_free(&a), BRAID_SUCCESS);
  ASSERT_EQ(braid_comm_free(&b), BRAID_SUCCESS);
}

}  // namespace
}  // namespace mp
