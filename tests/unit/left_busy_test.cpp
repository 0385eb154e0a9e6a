// A rank that leaves a call while a peer still has much to copy in it (a gather's root reading
// the ranks after this one) waits for that peer's next entry as a long wait, so that where ranks
// share cores it sleeps instead of yielding the copying rank's core (NodeChannel::left_busy).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "intranode/node_channel.hpp"
#include "node/node_map.hpp"

namespace braid::coll {
namespace {

class LeftBusy : public testing::Test {
 protected:
  LeftBusy()
      : bytes_(NodeChannel::segment_bytes(3)),
        base_(static_cast<char *>(std::aligned_alloc(4096, bytes_)), &std::free) {
    std::memset(base_.get(), 0, bytes_);
    for (int r = 0; r < 3; ++r) {
      maps_[r] = detail::make_node_map({"host", "host", "host"}, r);
      ch_[r] = std::make_unique<NodeChannel>(base_.get(), maps_[r]);
    }
  }

  size_t bytes_;
  std::unique_ptr<char, decltype(&std::free)> base_;
  detail::NodeMap maps_[3];
  std::unique_ptr<NodeChannel> ch_[3];
};

TEST_F(LeftBusy, EntryWaitsAreShortUntilMarked) {
  EXPECT_FALSE(ch_[1]->entered(0, 0, "enter").long_wait);
  EXPECT_FALSE(ch_[1]->entered(2, 0, "enter").long_wait);
}

TEST_F(LeftBusy, MarksOnlyThatPeersLaterEntriesLongUntilSeen) {
  NodeChannel &me = *ch_[1];
  me.left_busy(0, 5);  // left turn 5 while rank 0 still copied
  EXPECT_TRUE(me.entered(0, 6, "enter").long_wait);
  EXPECT_TRUE(me.entered(0, 9, "enter").long_wait);
  EXPECT_FALSE(me.entered(0, 5, "enter").long_wait);  // the turn left: it had entered that
  EXPECT_FALSE(me.entered(2, 6, "enter").long_wait);
  // Another rank's view is its own.
  EXPECT_FALSE(ch_[2]->entered(0, 6, "enter").long_wait);
  // Seeing rank 0 in the turn left (a slot check reads its latest entry) does not end it...
  me.saw_entered(0, 6);
  EXPECT_TRUE(me.entered(0, 6, "enter").long_wait);
  // ...seeing it enter a later turn does: its next waits are as short as any.
  me.saw_entered(0, 7);
  EXPECT_FALSE(me.entered(0, 7, "enter").long_wait);
}

TEST_F(LeftBusy, CountsTurnsModulo32Bits) {
  NodeChannel &me = *ch_[1];
  me.left_busy(0, UINT32_MAX);
  EXPECT_TRUE(me.entered(0, 0, "enter").long_wait);
  me.saw_entered(0, 0);  // entered turn UINT32_MAX
  EXPECT_TRUE(me.entered(0, 0, "enter").long_wait);
  me.saw_entered(0, 1);  // entered turn 0
  EXPECT_FALSE(me.entered(0, 1, "enter").long_wait);
}

TEST_F(LeftBusy, TheWaitIsOnThePeersEntryFlag) {
  NodeChannel &me = *ch_[1];
  me.left_busy(0, 2);
  const FlagWait f = me.entered(0, 3, "enter");
  EXPECT_TRUE(f.long_wait);
  EXPECT_FALSE(f.reached());
  // Sleepers are announced where the peer wakes them when it enters.
  EXPECT_NE(f.sleepers, nullptr);
  ch_[0]->publish_entry(3);
  EXPECT_TRUE(f.reached());
}

}  // namespace
}  // namespace braid::coll
