// StreamChoice between its bounds: each rank times its calls with and without streaming stores
// and keeps the faster, trying the other now and then; a call that retries the copy path
// (single copy against the windows) neither starts a retry of streaming nor counts.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "intranode/stream_choice.hpp"

namespace braid::coll {
namespace {

constexpr size_t kCache = size_t{32} << 20;
constexpr size_t kInBetween = size_t{16} << 20;  // 2 ranks: the cache once over

// Runs `calls` calls of kInBetween whose time is `streamed_ns` or `plain_ns` by the choice;
// returns how many of the last `tail` streamed (`all`: how many of them all).
int run(StreamChoice &choice, int calls, int tail, uint64_t streamed_ns, uint64_t plain_ns,
        int *all = nullptr) {
  int streamed = 0;
  for (int i = 0; i < calls; ++i) {
    const bool s = choice.decide(kInBetween, false);
    choice.measured(s ? streamed_ns : plain_ns, false);
    if (i >= calls - tail) streamed += s;
    if (all != nullptr) *all += s;
  }
  return streamed;
}

TEST(StreamChoice, KeepsStreamingWhereItIsFaster) {
  StreamChoice choice;
  choice.set_cache(kCache, 2);
  int all = 0;
  const int streamed = run(choice, 300, 200, 1'000'000, 2'000'000, &all);
  EXPECT_GE(streamed, 190) << "of the last 200 calls";
  EXPECT_EQ(choice.streamed_calls(), static_cast<uint64_t>(all));
  EXPECT_NEAR(choice.rate(true, kInBetween), 1e6 / static_cast<double>(kInBetween), 1e-9);
  EXPECT_NEAR(choice.rate(false, kInBetween), 2e6 / static_cast<double>(kInBetween), 1e-9);
}

TEST(StreamChoice, DropsStreamingWhereItIsSlower) {
  StreamChoice choice;
  choice.set_cache(kCache, 2);
  int all = 0;
  const int streamed = run(choice, 300, 200, 2'000'000, 1'000'000, &all);
  EXPECT_LE(streamed, 10) << "of the last 200 calls (retries only)";
  // The size's first call (cold, not counted), then at least one retry that measured it.
  EXPECT_GT(all, 1) << "streaming is never tried again";
  EXPECT_NEAR(choice.rate(true, kInBetween), 2e6 / static_cast<double>(kInBetween), 1e-9);
}

TEST(StreamChoice, FollowsAMachineThatChanges) {
  StreamChoice choice;
  choice.set_cache(kCache, 2);
  EXPECT_LE(run(choice, 200, 100, 2'000'000, 1'000'000), 10);
  EXPECT_GE(run(choice, 2000, 100, 1'000'000, 2'000'000), 95);
}

TEST(StreamChoice, ACopyPathRetryHoldsTheChoiceUncounted) {
  StreamChoice choice;
  choice.set_cache(kCache, 2);
  run(choice, 50, 0, 1'000'000, 2'000'000);
  const double before = choice.rate(true, kInBetween);
  for (int i = 0; i < 50; ++i) {
    // Held: the kept choice (streaming), whatever its time, and no figure moves.
    EXPECT_TRUE(choice.decide(kInBetween, true));
    choice.measured(9'000'000, false);
    // Asked but the copy path turned out retried: not counted either.
    choice.decide(kInBetween, false);
    choice.measured(9'000'000, true);
  }
  EXPECT_EQ(choice.rate(true, kInBetween), before);
}

// The copy path's chooser (CopyTimer) skips the calls that tried streaming's other way and the
// first after them: measured() says which.
TEST(StreamChoice, SaysWhichCallsTriedTheOtherWay) {
  StreamChoice choice;
  choice.set_cache(kCache, 2);
  run(choice, 10, 0, 1'000'000, 2'000'000);  // streaming kept
  int tried = 0, flagged = 0, after_try = 0;
  bool previous_tried = false;
  for (int i = 0; i < 400; ++i) {
    const bool s = choice.decide(kInBetween, false);
    const bool unsettled = choice.measured(s ? 1'000'000 : 2'000'000, false);
    if (!s) {
      ++tried;
      EXPECT_TRUE(unsettled) << "call " << i << " tried the plain copy";
    }
    if (s && previous_tried) after_try += unsettled;
    flagged += unsettled;
    previous_tried = !s;
  }
  EXPECT_GT(tried, 0);
  EXPECT_GT(after_try, 0) << "the first call back on streaming is flagged too";
  EXPECT_LE(flagged, 2 * tried + 2);
}

TEST(StreamChoice, OutsideItsBoundsNothingIsTimed) {
  StreamChoice choice;
  choice.set_cache(kCache, 2);
  EXPECT_FALSE(choice.decide(kCache / 4, false));  // half the cache: never
  choice.measured(1, false);
  EXPECT_TRUE(choice.decide(kCache * 2 + 1, false));  // past four times it: always
  choice.measured(1, false);
  EXPECT_EQ(choice.rate(false, kCache / 4), 0.0);
  EXPECT_EQ(choice.rate(true, kCache * 2 + 1), 0.0);
  EXPECT_EQ(choice.streamed_calls(), 1u);
  StreamChoice unknown;  // no cache size: never
  EXPECT_FALSE(unknown.decide(size_t{1} << 40, false));
  EXPECT_EQ(unknown.streamed_calls(), 0u);
}

// A reduce's deposits (time_at_every_size): timed whatever the cache says, even with none
// known, small and huge alike; the first calls go the ordinary way.
TEST(StreamChoice, TimedAtEverySizeKeepsTheFasterWayAnywhere) {
  for (const size_t cache : {size_t{0}, kCache}) {
    for (const size_t bytes : {size_t{256} << 10, size_t{1} << 30}) {
      StreamChoice choice;
      choice.set_cache(cache, 2);
      choice.time_at_every_size();
      int first_streamed = 0;
      for (int i = 0; i < 3; ++i) {
        first_streamed += choice.decide(bytes, false);
        choice.measured(1'000'000, false);
      }
      EXPECT_EQ(first_streamed, 0) << "cache " << cache << ", " << bytes << " bytes";
      int streamed = 0;  // streaming twice as fast: kept once tried
      for (int i = 0; i < 300; ++i) {
        const bool s = choice.decide(bytes, false);
        choice.measured(s ? 1'000'000 : 2'000'000, false);
        if (i >= 100) streamed += s;
      }
      EXPECT_GE(streamed, 190) << "of the last 200 calls; cache " << cache << ", " << bytes;
      EXPECT_GT(choice.rate(true, bytes), 0.0);
      EXPECT_GT(choice.rate(false, bytes), choice.rate(true, bytes));
    }
  }
  StreamChoice slower;  // and dropped where it is slower
  slower.time_at_every_size();
  EXPECT_LE(run(slower, 300, 200, 2'000'000, 1'000'000), 10);
}

// A gather's deposits (time_at_every_size(true), chosen by its root): the first calls stream,
// the fourth and fifth try ordinary stores, and the faster way is kept.
TEST(StreamChoice, StreamedFirstTriesOrdinaryStoresAndKeepsTheFaster) {
  constexpr size_t bytes = size_t{1} << 20;
  for (const bool streaming_faster : {false, true}) {
    StreamChoice choice;
    choice.time_at_every_size(true);
    std::vector<bool> ways;
    for (int i = 0; i < 300; ++i) {
      const bool s = choice.decide(bytes, false);
      ways.push_back(s);
      choice.measured(s == streaming_faster ? 1'000'000 : 2'000'000, false);
    }
    EXPECT_TRUE(ways[0] && ways[1] && ways[2]) << "streamed first";
    EXPECT_FALSE(ways[3] || ways[4]) << "then the other way tried";
    int streamed = 0;
    for (int i = 100; i < 300; ++i) streamed += ways[static_cast<size_t>(i)];
    if (streaming_faster)
      EXPECT_GE(streamed, 190) << "of the last 200 calls";
    else
      EXPECT_LE(streamed, 10) << "of the last 200 calls";
  }
}

// Streamed first, a held call (the copy path retrying its other way) streams whatever was
// learned; a call that made no deposits after all (forget) is neither counted nor timed.
TEST(StreamChoice, StreamedFirstHoldsStreamingAndForgetsCallsWithoutDeposits) {
  constexpr size_t bytes = size_t{1} << 20;
  StreamChoice choice;
  choice.time_at_every_size(true);
  for (int i = 0; i < 300; ++i) {  // ordinary stores twice as fast: learned
    const bool s = choice.decide(bytes, false);
    choice.measured(s ? 2'000'000 : 1'000'000, false);
  }
  EXPECT_FALSE(choice.decide(bytes, false));
  choice.measured(1'000'000, false);
  const uint64_t counted = choice.streamed_calls();
  EXPECT_TRUE(choice.decide(bytes, true));
  EXPECT_EQ(choice.streamed_calls(), counted + 1);
  choice.forget();
  EXPECT_EQ(choice.streamed_calls(), counted);
  EXPECT_FALSE(choice.trying());
  const double ordinary = choice.rate(false, bytes);
  EXPECT_FALSE(choice.measured(50'000'000, false)) << "forgotten: not timed";
  EXPECT_EQ(choice.rate(false, bytes), ordinary);
}

}  // namespace
}  // namespace braid::coll
