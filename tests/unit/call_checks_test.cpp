// The node path's call slots (collectives/intranode/node_channel.hpp, call_check.hpp): how far
// a rank may run ahead of the others, and when the records it did not wait for are compared.
// One process plays local rank 0 of three on a segment in its own memory; the other ranks'
// entries are written by hand, as their processes would.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "error.hpp"
#include "intranode/call_check.hpp"
#include "intranode/node_channel.hpp"
#include "intranode/tiny_calls.hpp"
#include "node/node_map.hpp"

namespace braid::coll {
namespace {

class CallSlots : public testing::Test {
 protected:
  CallSlots()
      : bytes_(NodeChannel::segment_bytes(3)),
        base_(static_cast<char *>(std::aligned_alloc(4096, bytes_)), &std::free),
        map_(detail::make_node_map({"host", "host", "host"}, 0)) {
    std::memset(base_.get(), 0, bytes_);
    ch_ = std::make_unique<NodeChannel>(base_.get(), map_);
  }

  // Local rank s enters `turn` with a broadcast from `root`.
  void enter(int s, uint32_t turn, int root = 0) {
    CallSlot &slot = ch_->call_slot(s, turn);
    slot.record = record(root);
    slot.mark.store(turn + 1);
  }
  static CallRecord record(int root) {
    CallRecord r;
    r.kind = 2;
    r.count = 4;
    r.dtype = 1;
    r.root = root;
    return r;
  }
  // This rank takes turns up to `turn` and enters each one.
  void take_turns_to(uint32_t turn) {
    while (taken_ <= turn) {
      ch_->take_turn();
      enter(0, taken_++);
    }
  }

  size_t bytes_;
  std::unique_ptr<char, decltype(&std::free)> base_;
  detail::NodeMap map_;
  std::unique_ptr<NodeChannel> ch_;
  uint32_t taken_ = 0;
};

TEST_F(CallSlots, ARankMayRunAheadOfTheOthersByAheadCallsOnly) {
  enter(1, 0);
  enter(2, 0);
  take_turns_to(9);
  // Turn 8 needs every other rank in turn 0 when 8 ahead are allowed; turn 9 needs turn 1.
  EXPECT_EQ(ch_->slot_blocker(8, kCallsAhead), -1);
  EXPECT_EQ(ch_->slot_blocker(9, kCallsAhead), 1);
  enter(1, 1);
  EXPECT_EQ(ch_->slot_blocker(9, kCallsAhead), 2);
  enter(2, 1);
  EXPECT_EQ(ch_->slot_blocker(9, kCallsAhead), -1);
  // A call held to one call ahead needs every rank in the turn before.
  EXPECT_EQ(ch_->slot_blocker(9, 1), 1);
  enter(1, 8);
  enter(2, 8);
  EXPECT_EQ(ch_->slot_blocker(9, 1), -1);
}

// Only a gather's or reduce's senders are held to one call: a root that hands its data over
// runs ahead, and so does a rank that waits for every record of its own turn anyway (holding a
// barrier back sent the inline path to the scheduler after every broadcast a root ran ahead).
TEST(CallsAhead, OnlyTheSendersToAWaitingRootAreHeldToOneCall) {
  EXPECT_EQ(calls_ahead(CollKind::gather, kNobody), 1u);
  EXPECT_EQ(calls_ahead(CollKind::reduce, kNobody), 1u);
  EXPECT_EQ(calls_ahead(CollKind::gather, kEveryone), kCallsAhead);
  EXPECT_EQ(calls_ahead(CollKind::broadcast, kNobody), kCallsAhead);
  EXPECT_EQ(calls_ahead(CollKind::broadcast, 0), kCallsAhead);
  EXPECT_EQ(calls_ahead(CollKind::scatter, kNobody), kCallsAhead);
  for (CollKind k : {CollKind::barrier, CollKind::allreduce, CollKind::allgather,
                     CollKind::alltoall, CollKind::reduce_scatter})
    EXPECT_EQ(calls_ahead(k, kEveryone), kCallsAhead) << static_cast<int>(k);
}

TEST_F(CallSlots, TheFirstTurnsWaitForNobody) {
  // Nobody entered anything yet: the slots of the first turns were never written, and there is
  // no earlier turn to wait for.
  for (uint32_t turn = 0; turn <= kCallsAhead; ++turn) {
    take_turns_to(turn);
    EXPECT_EQ(ch_->slot_blocker(turn, kCallsAhead), -1) << turn;
  }
  take_turns_to(kCallsAhead + 1);
  EXPECT_EQ(ch_->slot_blocker(kCallsAhead + 1, kCallsAhead), 1);
}

TEST_F(CallSlots, ALaterTurnsMarkInTheSameSlotCountsAsEntered) {
  // The marks only grow: a rank whose slot of turn 1 already holds turn 17 entered turn 1.
  take_turns_to(9);
  enter(1, 17);
  enter(2, 1);
  EXPECT_EQ(ch_->slot_blocker(9, kCallsAhead), -1);
}

TEST_F(CallSlots, AMissingRecordWaitsUntilItsCheckIsDue) {
  take_turns_to(0);
  ch_->defer_check(0, kEveryone);
  enter(1, 0);
  int rank = -1;
  uint32_t at = 0;
  // Rank 2's record is not there: left for later while the slots keep it.
  for (uint32_t turn = 1; turn < kCallSlots - kCallsAhead; ++turn) {
    EXPECT_EQ(settle_checks(*ch_, turn, kNobody, kCallsAhead, &rank, &at), Settle::done) << turn;
    EXPECT_EQ(ch_->unchecked().size(), 1u);
  }
  // Due: at the turn after which rank 2 may rewrite it.
  EXPECT_EQ(settle_checks(*ch_, kCallSlots - kCallsAhead, kNobody, kCallsAhead, &rank, &at),
            Settle::wait);
  EXPECT_EQ(rank, 2);
  EXPECT_EQ(at, 0u);
  enter(2, 0);
  EXPECT_EQ(settle_checks(*ch_, kCallSlots - kCallsAhead, kNobody, kCallsAhead, &rank, &at),
            Settle::done);
  EXPECT_TRUE(ch_->unchecked().empty());
}

TEST_F(CallSlots, ACallThatWaitsForEveryRankSettlesEveryCheckFirst) {
  take_turns_to(1);
  ch_->defer_check(0, kEveryone);
  ch_->defer_check(1, 1);  // a sender that named rank 1 as the root
  enter(1, 0);
  enter(2, 0);
  int rank = -1;
  uint32_t at = 0;
  EXPECT_EQ(settle_checks(*ch_, 2, kEveryone, kCallsAhead, &rank, &at), Settle::wait);
  EXPECT_EQ(rank, 1);
  EXPECT_EQ(at, 1u);
  ASSERT_EQ(ch_->unchecked().size(), 1u);  // turn 0 was there and agreed
  enter(1, 1);
  EXPECT_EQ(settle_checks(*ch_, 2, kEveryone, kCallsAhead, &rank, &at), Settle::done);
  EXPECT_TRUE(ch_->unchecked().empty());
}

TEST_F(CallSlots, ADifferingRecordIsReportedNamingBothRanks) {
  take_turns_to(2);
  ch_->defer_check(2, kEveryone);
  ch_->defer_check(2, kEveryone);  // the inline path and its coroutine: once
  ASSERT_EQ(ch_->unchecked().size(), 1u);
  enter(1, 2);
  enter(2, 2, /*root=*/2);
  int rank = -1;
  uint32_t at = 0;
  ASSERT_EQ(settle_checks(*ch_, 3, kNobody, kCallsAhead, &rank, &at), Settle::differs);
  EXPECT_EQ(at, 2u);
  try {
    report_previous(*ch_, at);
    FAIL() << "no disagreement reported";
  } catch (const detail::Disagreement &e) {
    EXPECT_NE(e.message().find("rank 0 passed root 0, rank 2 passed root 2"), std::string::npos)
        << e.message();
  }
  EXPECT_TRUE(ch_->unchecked().empty());
}

}  // namespace
}  // namespace braid::coll
