// A broadcast's or scatter's reader chooses between the windows and single copy by what the call
// costs (NodeChannel::call_cost): its own time where ranks have a core each, the sum of every
// rank's part where they share cores. There a reader's own time favoured single copy while the
// root, waiting for the readers to be scheduled, paid more than the readers saved (4 ranks on 2
// cores, 32-128 KiB scatters: auto 1.25-1.42x Open MPI, forced single copy 0.80-1.01x).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "intranode/node_channel.hpp"
#include "node/node_map.hpp"

namespace braid::coll {
namespace {

class CallCost : public testing::Test {
 protected:
  CallCost()
      : bytes_(NodeChannel::segment_bytes(2)),
        base_(static_cast<char *>(std::aligned_alloc(4096, bytes_)), &std::free) {
    std::memset(base_.get(), 0, bytes_);
    for (int r = 0; r < 2; ++r) {
      maps_[r] = detail::make_node_map({"host", "host"}, r);
      ch_[r] = std::make_unique<NodeChannel>(base_.get(), maps_[r]);
      ch_[r]->set_cma_mode(detail::CmaMode::automatic);
    }
  }

  // Calls of kBytes in which the reader (local rank 1) would take `own_windows` or
  // `own_single` ns itself, while the root's part costs `root_windows` or `root_single`;
  // returns how many of the last 100 of 400 went single copy.
  int single_calls(uint32_t own_windows, uint32_t own_single, uint32_t root_windows,
                   uint32_t root_single) {
    NodeChannel &reader = *ch_[1];
    int single_count = 0;
    for (int call = 0; call < 400; ++call) {
      const bool single = reader.cma_wanted(kBytes);
      ch_[0]->publish_part_cost(single, kBytes, single ? root_single : root_windows);
      const uint64_t own = single ? own_single : own_windows;
      reader.publish_part_cost(single, kBytes, own);
      reader.cma_measured(single, kBytes, reader.call_cost(single, kBytes, own));
      if (call >= 300 && single) ++single_count;
    }
    return single_count;
  }

  static constexpr size_t kBytes = size_t{64} << 10;
  size_t bytes_;
  std::unique_ptr<char, decltype(&std::free)> base_;
  detail::NodeMap maps_[2];
  std::unique_ptr<NodeChannel> ch_[2];
};

TEST_F(CallCost, WithACoreEachIsTheReadersOwnTime) {
  ch_[0]->publish_part_cost(true, kBytes, 50000);
  EXPECT_EQ(ch_[1]->call_cost(true, kBytes, 2000), 2000u);
  // So the reader keeps single copy, which is cheaper for it, whatever the root's wait.
  EXPECT_GE(single_calls(3000, 2000, 1000, 20000), 90);
}

TEST_F(CallCost, OnSharedCoresIsEveryRanksPart) {
  for (auto &ch : ch_) ch->set_oversubscribed(true);
  // A rank not measured yet on a path counts as this one.
  EXPECT_EQ(ch_[1]->call_cost(true, kBytes, 2000), 4000u);
  ch_[0]->publish_part_cost(true, kBytes, 50000);
  EXPECT_EQ(ch_[1]->call_cost(true, kBytes, 2000), 52000u);
  // Another size class and the other path keep their own figures.
  EXPECT_EQ(ch_[1]->call_cost(false, kBytes, 2000), 4000u);
  EXPECT_EQ(ch_[1]->call_cost(true, kBytes * 4, 2000), 4000u);
}

TEST_F(CallCost, OnSharedCoresTheReaderTakesThePathCheaperForTheCall) {
  for (auto &ch : ch_) ch->set_oversubscribed(true);
  // Single copy saves the reader 1 us and costs the root 19 more: the windows.
  EXPECT_LE(single_calls(3000, 2000, 1000, 20000), 10);
  // Single copy saves the reader more than it costs the root: single copy.
  EXPECT_GE(single_calls(20000, 2000, 5000, 8000), 90);
}

}  // namespace
}  // namespace braid::coll
