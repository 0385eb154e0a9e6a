#include "direct_case.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "comm/transport.hpp"
#include "error.hpp"

namespace braid::transport_test {
namespace bt = ::braid::transport_test;
using detail::cat;

namespace {

// Every rank tells every peer, by a message, that its cancels are done, and waits for theirs
// while progressing: taking an advert back needs the sender's answer, which a bootstrap barrier
// would not give.
void cancels_done(bt::Job &job, uint64_t tag, const char *what) {
  bt::Batch done(job, what);
  std::vector<unsigned char> token(static_cast<size_t>(job.size()), 1),
      tokens(static_cast<size_t>(job.size()), 0);
  for (int peer : job.peers()) {
    done.send(peer, tag, &token[static_cast<size_t>(peer)], 1);
    done.recv(peer, tag, &tokens[static_cast<size_t>(peer)], 1, 1);
  }
  done.wait_all();
}

}  // namespace

// Eager messages into receives posted before them (the verbs plugin advertises such receives
// and writes the message straight into them). Every peer posts, for two tags interleaved,
// receives of several sizes (one under the advert threshold, one with room to spare), waits
// until its adverts can have arrived, and only then do the messages go, in the order the
// receives match them. Then a receive is cancelled after its advert went out, and the message
// its sender sends after that must reach the next receive with the tag, with the cancelled
// buffer untouched. BRAID_TEST_EXPECT_DIRECT=1 also requires the verbs plugin to have written
// messages directly and taken adverts back, and cancels a receive while messages the sender
// numbered against it (one of them written directly into a later receive) are in flight.
void case_direct(bt::Job &job) {
  const size_t limit = std::max<size_t>(job.props().eager_limit, 1);
  // (tag, message bytes, receive capacity), in posting order.
  std::vector<std::tuple<uint64_t, size_t, size_t>> plan;
  for (size_t bytes : {size_t{4096}, size_t{512}, size_t{16384}, size_t{10000}, limit}) {
    const size_t b = std::min(bytes, limit);
    plan.emplace_back(8100, b, b == 10000 ? 65536 : b);
    plan.emplace_back(8101, b / 2 + 1, b);
  }
  const uint64_t direct0 = counter(job, "direct_msgs"), retracts0 = counter(job, "direct_retracts");
  const size_t n = static_cast<size_t>(job.size());
  // Three rounds: a transport that pauses its adverts after earlier cases found them useless
  // resumes them once one of them is used.
  for (uint64_t round = 0; round < 3; ++round) {
    std::vector<std::vector<std::vector<unsigned char>>> in(n), out(n);
    bt::Batch batch(job, cat("receives posted early, round ", round));
    auto seed_of = [&](int src, int dst, size_t i) {
      return bt::seed(src, dst, std::get<0>(plan[i]) * 1000 + round * 100 + i);
    };
    for (int peer : job.peers()) {
      in[peer].resize(plan.size());
      for (size_t i = 0; i < plan.size(); ++i) {
        const auto [tag, bytes, capacity] = plan[i];
        in[peer][i].assign(capacity + kSlack, bt::kSentinel);
        batch.recv(peer, tag, in[peer][i].data(), capacity + kSlack, bytes);
      }
    }
    job.barrier();                                       // everyone posted
    batch.progress_for(std::chrono::milliseconds(200));  // the adverts arrive
    job.barrier();
    for (int peer : job.peers()) {
      out[peer].resize(plan.size());
      for (size_t i = 0; i < plan.size(); ++i) {
        const auto [tag, bytes, capacity] = plan[i];
        out[peer][i].resize(bytes);
        bt::fill(out[peer][i].data(), bytes, seed_of(job.rank(), peer, i));
        batch.send(peer, tag, out[peer][i].data(), bytes);
      }
    }
    batch.wait_all();
    for (int peer : job.peers())
      for (size_t i = 0; i < plan.size(); ++i) {
        const auto [tag, bytes, capacity] = plan[i];
        bt::verify(in[peer][i].data(), bytes, seed_of(peer, job.rank(), i),
                   cat("round ", round, ", receive ", i, " (tag ", tag, ", ", bytes,
                       " B) from rank ", peer));
        bt::verify_sentinel(in[peer][i].data() + bytes, capacity + kSlack - bytes,
                            cat("past receive ", i, " from rank ", peer));
      }
    job.barrier();
  }
  const uint64_t direct = counter(job, "direct_msgs") - direct0;

  // A receive cancelled after its advert went out. Taking an advert back needs the sender's
  // answer, so every rank keeps progressing after its own cancels until every peer has said
  // (by a message) that its cancels are done; only then does anyone send the message, which
  // must reach a new receive with the cancelled buffer untouched.
  const size_t bytes = std::min<size_t>(8192, limit);
  std::vector<std::vector<unsigned char>> got(n), sent(n);
  // Fresh pages of their own, so that their registrations (for the adverts) are new entries of
  // a registration cache, which the cancels must drop: a cancelled receive's buffer is the
  // application's again, and no peer may keep a key that writes into it.
  const size_t span = (bytes + 4095) / 4096 * 4096;
  struct Unmap {
    size_t len;
    void operator()(unsigned char *p) const { munmap(p, len); }
  };
  std::vector<std::unique_ptr<unsigned char, Unmap>> dropped;
  for (size_t i = 0; i < n; ++i) {
    void *p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw bt::CaseFailure("mmap failed");
    dropped.emplace_back(static_cast<unsigned char *>(p), Unmap{span});
  }
  const uint64_t entries0 = counter(job, "rcache_entries");
  {
    bt::Batch cancelled(job, "a receive to cancel");
    for (int peer : job.peers()) {
      std::memset(dropped[peer].get(), bt::kSentinel, bytes);
      cancelled.recv(peer, 8102, dropped[peer].get(), bytes, bytes);
    }
    job.barrier();
    cancelled.progress_for(std::chrono::milliseconds(200));
    job.barrier();
  }  // cancelled here
  cancels_done(job, 8103, "after the cancels");
  const uint64_t entries_after_cancels = counter(job, "rcache_entries");
  {
    bt::Batch batch(job, "after a cancel");
    for (int peer : job.peers()) {
      got[peer].assign(bytes, 0);
      sent[peer].resize(bytes);
      bt::fill(sent[peer].data(), bytes, bt::seed(job.rank(), peer, 8102));
      batch.send(peer, 8102, sent[peer].data(), bytes);
    }
    batch.progress_for(std::chrono::milliseconds(50));
    for (int peer : job.peers()) batch.recv(peer, 8102, got[peer].data(), bytes, bytes);
    batch.wait_all();
    for (int peer : job.peers()) {
      bt::verify(got[peer].data(), bytes, bt::seed(peer, job.rank(), 8102),
                 cat("after a cancelled receive, from rank ", peer));
      bt::verify_sentinel(dropped[peer].get(), bytes,
                          cat("the cancelled receive's buffer for rank ", peer));
    }
  }
  const char *expect = std::getenv("BRAID_TEST_EXPECT_DIRECT");
  const bool expect_direct = expect != nullptr && std::string(expect) == "1";
  if (expect_direct) {
    // A cancel while messages numbered against it are in flight (with adverts only: without,
    // the first message would simply match the second receive). Receives A (512 B, below the
    // advert threshold) and B (4 KiB, advertised, counting A ahead of it) with one tag; the
    // peer sends 512 B, then 4 KiB, which it writes into B; the receiver cancels A before it
    // has looked at either. The second message must complete B, and nobody may take the peer
    // for broken.
    std::vector<std::vector<unsigned char>> a_buf(n), b_buf(n), m1(n), m2(n);
    bt::Batch keep(job, "the receive after one cancelled with messages in flight");
    auto cancelled =
        std::make_unique<bt::Batch>(job, "a receive cancelled with messages in flight");
    for (int peer : job.peers()) {
      a_buf[peer].assign(512, bt::kSentinel);
      b_buf[peer].assign(4096, bt::kSentinel);
      cancelled->recv(peer, 8104, a_buf[peer].data(), 512, 512);
      keep.recv(peer, 8104, b_buf[peer].data(), 4096, 4096);
    }
    job.barrier();
    keep.progress_for(std::chrono::milliseconds(200));  // the adverts arrive
    job.barrier();
    for (int peer : job.peers()) {
      m1[peer].resize(512);
      m2[peer].resize(4096);
      bt::fill(m1[peer].data(), 512, bt::seed(job.rank(), peer, 81041));
      bt::fill(m2[peer].data(), 4096, bt::seed(job.rank(), peer, 81042));
      keep.send(peer, 8104, m1[peer].data(), 512);
      keep.send(peer, 8104, m2[peer].data(), 4096);
    }
    job.barrier();      // the messages left; nobody has progressed since
    cancelled.reset();  // cancels A
    cancels_done(job, 8105, "after the cancels with messages in flight");
    keep.wait_all();
    // A's buffer is not checked: with several peers, the first cancel's progress may complete
    // another peer's A before its own cancel (which then drops a completed receive).
    for (int peer : job.peers())
      bt::verify(b_buf[peer].data(), 4096, bt::seed(peer, job.rank(), 81042),
                 cat("the receive after one cancelled with messages in flight, from rank ", peer));
  }
  const uint64_t retracts = counter(job, "direct_retracts") - retracts0;
  std::printf("  (%llu direct messages sent, %llu retracts in this case)\n",
              static_cast<unsigned long long>(direct), static_cast<unsigned long long>(retracts));
  if (expect_direct && (direct == 0 || retracts == 0))
    throw bt::CaseFailure(
        "the verbs plugin was expected to write messages into advertised "
        "receives and to take adverts back, and did not");
  if (expect_direct && counter(job, "rcache_enabled") == 1 && entries_after_cancels > entries0)
    throw bt::CaseFailure(cat("the cancelled receives' registrations stayed cached (",
                              entries_after_cancels - entries0,
                              " more entries after the cancels): their keys still write there"));
}

}  // namespace braid::transport_test
