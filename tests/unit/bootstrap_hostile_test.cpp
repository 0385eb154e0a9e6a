// Rank 0 listens on a port anyone can reach. These tests connect to it as hostile or confused
// clients while a real job forms, and check that each is refused (with a reply byte where it
// got far enough, and a warning naming its address and the reason) without disturbing the job.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>

#include "bootstrap/wire.hpp"
#include "bootstrap_harness.hpp"

namespace braid::detail {
namespace {

using namespace braid::detail::testing;
using Clock = std::chrono::steady_clock;

constexpr const char *kKey = "job-key";

std::vector<uint8_t> hello(uint32_t rank, uint32_t size, std::string key = kKey) {
  return bs::encode_hello(bs::Hello{bs::kProtocolVersion, rank, size, std::move(key), "mallory"});
}

// Forms a job of `size` ranks on `port` in the background: rank 0 at once, the other ranks
// only when `others` is set, so the test can talk to rank 0 alone first.
class BackgroundJob {
 public:
  BackgroundJob(int size, uint16_t port, std::string key = kKey, double timeout_s = 3.0)
      : size_(size), go_(others_.get_future().share()) {
    for (int r = 0; r < size; ++r)
      ranks_.push_back(std::async(std::launch::async, [=, this] {
        if (r != 0) go_.wait();
        return run_body(
            [&](int rank) {
              auto b = make_tcp_bootstrap(config(rank, size, port, key, timeout_s));
              std::vector<int> in{rank}, out(size);
              b->allgather(in.data(), out.data(), sizeof(int));
              for (int q = 0; q < size; ++q)
                if (out[q] != q) return std::string("bad allgather result");
              return std::string();
            },
            r);
      }));
  }
  ~BackgroundJob() {
    release_others();
    for (auto &f : ranks_) f.wait();
  }
  void release_others() {
    if (!released_) others_.set_value();
    released_ = true;
  }
  // Releases the other ranks and expects the job to form and work.
  void expect_forms() {
    release_others();
    for (int r = 0; r < size_; ++r) {
      Outcome o = ranks_[r].get();
      EXPECT_TRUE(o.ok) << "rank " << r << ": " << o.message;
      EXPECT_EQ(o.data, "") << "rank " << r;
    }
    ranks_.clear();
  }

 private:
  int size_;
  std::promise<void> others_;
  std::shared_future<void> go_;
  bool released_ = false;
  std::vector<std::future<Outcome>> ranks_;
};

// Sends `bytes` as a client and returns rank 0's reply byte (-1: closed without one).
int send_and_read_reply(uint16_t port, const std::vector<uint8_t> &bytes) {
  int fd = raw_connect(port);
  if (fd < 0) return -3;
  raw_send(fd, bytes.data(), bytes.size());
  int reply = raw_read_byte(fd);
  bool closed = raw_closed_within(fd, 2.0);
  close(fd);
  return closed ? reply : -4;  // a refused connection must also be closed
}

struct RefusalCase {
  const char *name;
  std::vector<uint8_t> bytes;
  int reply;            // the expected reply byte
  const char *warning;  // expected in rank 0's warning
};

std::vector<uint8_t> with_u32(std::vector<uint8_t> bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(v >> (8 * i));
  return bytes;
}

TEST(BootstrapHostile, RefusesBadClientsWhileTheJobForms) {
  auto reply = [](bs::Reply r) { return static_cast<int>(r); };
  std::vector<uint8_t> wrong_magic = hello(1, 2);
  wrong_magic[7] = '0';
  std::vector<uint8_t> garbage(300);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 131 + 7);
  std::vector<uint8_t> trailing = hello(1, 2);
  trailing.push_back('!');

  const std::vector<RefusalCase> cases{
      {"wrong key", hello(1, 2, "job-kez"), reply(bs::Reply::bad_key), "wrong job key"},
      {"missing key", hello(1, 2, ""), reply(bs::Reply::bad_key), "presented no job key"},
      {"longer key", hello(1, 2, "job-key2"), reply(bs::Reply::bad_key), "wrong job key"},
      {"wrong magic", wrong_magic, reply(bs::Reply::bad_protocol), "bad magic"},
      {"garbage", garbage, reply(bs::Reply::bad_protocol), "bad magic"},
      {"http", {'G', 'E', 'T', ' ', '/', '\r', '\n'}, reply(bs::Reply::bad_protocol), "magic"},
      {"version", with_u32(hello(1, 2), 8, 7), reply(bs::Reply::bad_protocol), "version 7"},
      {"huge key length", with_u32(hello(1, 2), 20, 0x7fffffff), reply(bs::Reply::bad_protocol),
       "key length"},
      {"rank 0", hello(0, 2), reply(bs::Reply::bad_rank), "claims rank 0"},
      {"rank too big", hello(2, 2), reply(bs::Reply::bad_rank), "claims rank 2"},
      {"huge rank", hello(0xffffffff, 2), reply(bs::Reply::bad_rank), "claims rank 4294967295"},
      {"trailing bytes", trailing, reply(bs::Reply::bad_protocol), "after its handshake"},
  };
  const uint16_t port = free_port();
  ::testing::internal::CaptureStderr();
  {
    BackgroundJob job(2, port);
    for (const RefusalCase &c : cases)
      EXPECT_EQ(send_and_read_reply(port, c.bytes), c.reply) << c.name;
    job.expect_forms();
  }
  std::string log = ::testing::internal::GetCapturedStderr();
  for (const RefusalCase &c : cases) EXPECT_NE(log.find(c.warning), std::string::npos) << c.name;
  EXPECT_NE(log.find("refused connection from 127.0.0.1:"), std::string::npos) << log;
}

// A wrong size with the job's key is no stranger but a rank of this job launched with
// another size (BRAID_SIZE, or braid_comm_init_rank's nranks): the job cannot form, so rank 0
// fails at once, naming both sizes, instead of at its timeout.
TEST(BootstrapHostile, ARankWithTheKeyButAnotherSizeFailsTheJobAtOnce) {
  const uint16_t port = free_port();
  ::testing::internal::CaptureStderr();
  auto rank0 = std::async(std::launch::async, [port] {
    return run_body(
        [port](int) {
          make_tcp_bootstrap(config(0, 2, port, kKey, 20.0));
          return std::string("the job formed");
        },
        0);
  });
  const auto start = Clock::now();
  EXPECT_EQ(send_and_read_reply(port, hello(1, 3)), static_cast<int>(bs::Reply::bad_size));
  const Outcome o = rank0.get();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(o.ok) << o.data;
  EXPECT_EQ(o.code, BRAID_ERR_BOOTSTRAP);
  EXPECT_NE(o.message.find("rank 0: rank 1 (127.0.0.1:"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find(") joined a job of 3 ranks, but rank 0's has 2 (BRAID_SIZE, or "
                           "braid_comm_init_rank's nranks)"),
            std::string::npos)
      << o.message;
  EXPECT_LT(seconds_since(start), 10.0) << "rank 0 waited for its timeout (20 s)";
  EXPECT_NE(log.find("claims job size 3"), std::string::npos) << log;
}

TEST(BootstrapHostile, KeyIsRefusedWhenTheJobHasNone) {
  const uint16_t port = free_port();
  ::testing::internal::CaptureStderr();
  {
    BackgroundJob job(2, port, "");
    EXPECT_EQ(send_and_read_reply(port, hello(1, 2, "some-key")),
              static_cast<int>(bs::Reply::bad_key));
    job.expect_forms();
  }
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("presented a job key, but this job has none"), std::string::npos) << log;
}

TEST(BootstrapHostile, SilentAndHalfFinishedConnectionsDoNotHoldUpTheJob) {
  const uint16_t port = free_port();
  ::testing::internal::CaptureStderr();
  BackgroundJob job(3, port);
  int silent = raw_connect(port);
  int partial = raw_connect(port);
  ASSERT_GE(silent, 0);
  ASSERT_GE(partial, 0);
  std::vector<uint8_t> h = hello(1, 3);
  raw_send(partial, h.data(), 10);
  auto start = Clock::now();
  job.expect_forms();
  // Sooner than the per-connection handshake deadline (3 s): rank 0 did not wait for them.
  EXPECT_LT(seconds_since(start), 2.5);
  EXPECT_TRUE(raw_closed_within(silent, 1.0));
  EXPECT_TRUE(raw_closed_within(partial, 1.0));
  close(silent);
  close(partial);
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("had not completed its handshake"), std::string::npos) << log;
}

TEST(BootstrapHostile, SilentConnectionIsDroppedAtItsHandshakeDeadline) {
  const uint16_t port = free_port();
  ::testing::internal::CaptureStderr();
  // The job's own timeout (9 s) outlasts the 3 s handshake deadline with room for a loaded
  // machine (TSan in CI).
  BackgroundJob job(2, port, kKey, 9.0);
  int silent = raw_connect(port);
  ASSERT_GE(silent, 0);
  auto start = Clock::now();
  EXPECT_TRUE(raw_closed_within(silent, 8.0));
  double waited = seconds_since(start);
  EXPECT_GT(waited, 2.0);
  EXPECT_LT(waited, 8.0);
  close(silent);
  job.expect_forms();
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("no complete handshake within 3 s"), std::string::npos) << log;
}

TEST(BootstrapHostile, DuplicateRankIsRefusedAndADepartedRankMayRejoin) {
  const uint16_t port = free_port();
  ::testing::internal::CaptureStderr();
  BackgroundJob job(3, port);
  // An impostor with the key joins as rank 1 before the real rank 1 ...
  int first = raw_connect(port);
  ASSERT_GE(first, 0);
  std::vector<uint8_t> h = hello(1, 3);
  raw_send(first, h.data(), h.size());
  EXPECT_EQ(raw_read_byte(first), static_cast<int>(bs::Reply::accepted));
  // ... so a second rank 1 is refused ...
  EXPECT_EQ(send_and_read_reply(port, h), static_cast<int>(bs::Reply::duplicate_rank));
  // ... and once the impostor leaves, the real rank 1 takes its place.
  close(first);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let rank 0 see it leave
  job.expect_forms();
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("claims rank 1, which already joined from 127.0.0.1:"), std::string::npos)
      << log;
  EXPECT_NE(log.find("rank 1"), std::string::npos) << log;
  EXPECT_NE(log.find("disconnected before the job formed"), std::string::npos) << log;
}

// A rank whose handshake timed out before rank 0 read it (rank 0 busy, or slow to start
// accepting) connects again; rank 0 then reads both hellos in one round. The first connection,
// closed by then, must not make the retry a duplicate.
TEST(BootstrapHostile, AHandshakeItsRankGaveUpOnDoesNotRefuseItsRetry) {
  auto listener = std::make_shared<BootstrapListener>(BootstrapListener::on_any_interface(false));
  const uint16_t port = listener->port();
  const int stale = raw_connect(port);  // queued: rank 0 does not accept yet
  ASSERT_GE(stale, 0);
  const std::vector<uint8_t> h = hello(1, 3);
  ASSERT_TRUE(raw_send(stale, h.data(), h.size()));
  close(stale);
  ::testing::internal::CaptureStderr();
  // Ranks 1 and 2 connect (and wait) before rank 0 starts accepting.
  auto outcomes = run_threads(
      3,
      [&](int rank) {
        std::unique_ptr<Bootstrap> b =
            rank == 0 ? make_tcp_bootstrap(config(0, 3, port, kKey, 5.0), std::move(*listener))
                      : make_tcp_bootstrap(config(rank, 3, port, kKey, 5.0));
        int mine = rank, all[3] = {-1, -1, -1};
        b->allgather(&mine, all, sizeof mine);
        return all[0] == 0 && all[1] == 1 && all[2] == 2 ? std::string() : "bad allgather result";
      },
      {0.3, 0.0, 0.0});
  const std::string log = ::testing::internal::GetCapturedStderr();
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(outcomes[r].ok) << "rank " << r << ": " << outcomes[r].message << "\n" << log;
    EXPECT_EQ(outcomes[r].data, "") << "rank " << r;
  }
}

TEST(BootstrapHostile, ManyJunkConnectionsAtOnce) {
  const uint16_t port = free_port();
  ::testing::internal::CaptureStderr();
  BackgroundJob job(4, port);
  std::vector<int> junk;
  for (int i = 0; i < 40; ++i) {
    int fd = raw_connect(port);
    ASSERT_GE(fd, 0);
    if (i % 2 == 0) raw_send(fd, "BRAIDBS1\xff\xff", 10);
    junk.push_back(fd);
  }
  job.expect_forms();
  for (int fd : junk) close(fd);
  ::testing::internal::GetCapturedStderr();
}

TEST(BootstrapHostile, MisconfiguredRankFailsFastAndRankZeroNamesIt) {
  const uint16_t port = free_port();
  ::testing::internal::CaptureStderr();
  auto outcomes = run_threads(2, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 2, port, rank == 1 ? "other-key" : kKey, 1.0));
    return std::string();
  });
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(outcomes[1].code, BRAID_ERR_BOOTSTRAP);
  EXPECT_NE(outcomes[1].message.find("rank 1: rank 0 at 127.0.0.1:"), std::string::npos)
      << outcomes[1].message;
  EXPECT_NE(outcomes[1].message.find("refused this rank: job key does not match"),
            std::string::npos)
      << outcomes[1].message;
  EXPECT_EQ(outcomes[0].code, BRAID_ERR_BOOTSTRAP);
  EXPECT_NE(outcomes[0].message.find("waiting for rank 1 to connect"), std::string::npos)
      << outcomes[0].message;
  EXPECT_NE(outcomes[0].message.find("refused 1 other connection"), std::string::npos)
      << outcomes[0].message;
}

}  // namespace
}  // namespace braid::detail
