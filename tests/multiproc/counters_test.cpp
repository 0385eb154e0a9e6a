// Counters: every communicator reports its transport's counters and braid's own through the C
// and C++ APIs, and they move with the traffic.
#include <braid/braid.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

TEST(Counters, CountCollectivesAndTransportTraffic) {
  braid::Comm comm(world());
  std::map<std::string, uint64_t> before = comm.counters();
  ASSERT_TRUE(before.count("collectives_started"));
  std::vector<float> small(4, 1.0f), large(1 << 18, 1.0f);  // 16 B and 1 MiB
  comm.allreduce(small);
  comm.allreduce(large);
  std::map<std::string, uint64_t> after = comm.counters();
  if (size() == 1) return;  // a 1-rank collective is a local copy: nothing is started
  EXPECT_EQ(after["collectives_started"], before["collectives_started"] + 2);
  // Ranks sharing a node move data through shared memory, not the transport.
  const char *intranode = std::getenv("BRAID_INTRANODE");
  if (intranode == nullptr || std::string(intranode) != "off") return;
  if (comm.transport() == "verbs") {
    // The small message goes inline or eager, the 1 MiB one (in segments) by rendezvous.
    EXPECT_GT(after["inline_msgs"] + after["eager_msgs"],
              before["inline_msgs"] + before["eager_msgs"]);
    EXPECT_GT(after["rendezvous_msgs"], before["rendezvous_msgs"]);
    EXPECT_GT(after["rdma_reads"], before["rdma_reads"]);
    EXPECT_GT(after["recvs_posted"], 0u);
    EXPECT_GT(after["recv_buffer_bytes"], 0u);
    for (const char *name : {"credit_stalls", "srq_limit_events", "credit_msgs"})
      EXPECT_TRUE(after.count(name)) << name;
  } else if (comm.transport() == "ucx") {
    EXPECT_GT(after["sends"], before["sends"]);
    EXPECT_GT(after["bytes_sent"], before["bytes_sent"] + (1u << 20) / 2);
  }
}

TEST(Counters, CApiSizesTheArrayFirst) {
  size_t n = 0;
  ASSERT_EQ(braid_comm_counters(world(), nullptr, &n), BRAID_SUCCESS);
  ASSERT_GT(n, 0u);
  std::vector<braid_counter_t> out(n);
  size_t got = n;
  ASSERT_EQ(braid_comm_counters(world(), out.data(), &got), BRAID_SUCCESS);
  EXPECT_EQ(got, n);
  EXPECT_STREQ(out[n - 1].name, "collectives_started");
  EXPECT_EQ(braid_comm_counters(nullptr, out.data(), &got), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(braid_comm_counters(world(), out.data(), nullptr), BRAID_ERR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace mp
