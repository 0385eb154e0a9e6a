// The engine's concurrent branches (engine/branches.hpp) on the real engine: a Collective over
// the real ucx transport of a one-rank job, whose algorithm runs two branches that wait on
// counters this test advances. Checks that the parent resumes only when both have finished,
// that a failure in one branch ends the collective without resuming the other, and that a
// branch stuck behind the other one reports what the other one waits for.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "comm/transport.hpp"
#include "engine/branches.hpp"
#include "engine/collective.hpp"
#include "error.hpp"
#include "plugin/plugin_loader.hpp"

namespace braid::coll {
namespace {

// What the test's algorithms see; one test at a time.
struct Scene {
  std::atomic<uint32_t> a{0}, b{0};  // the branches wait for these
  std::string trace;                 // what ran, in order
  int frames_alive = 0;              // branch frames not yet destroyed
  bool a_fails = false;
  int a_peer = -1;  // whom branch a claims to wait for
};
Scene *scene = nullptr;

struct FrameGuard {  // counts a branch frame until it is destroyed
  FrameGuard() { ++scene->frames_alive; }
  ~FrameGuard() { --scene->frames_alive; }
  FrameGuard(const FrameGuard &) = delete;
  FrameGuard &operator=(const FrameGuard &) = delete;
};

Task branch_a(CollContext &ctx) {
  FrameGuard g;
  scene->trace += "a0 ";
  co_await ctx.wait_flag(FlagWait{&scene->a, 1, scene->a_peer, 0, nullptr, "advance a"});
  if (scene->a_fails) detail::fail(BRAID_ERR_TRANSPORT, "branch a failed");
  scene->trace += "a1 ";
}

// Waits for its counter, then for branch a's (a cross-branch dependency, peer -1).
Task branch_b(CollContext &ctx) {
  FrameGuard g;
  scene->trace += "b0 ";
  co_await ctx.wait_flag(FlagWait{&scene->b, 1, -1, 0, nullptr, "advance b"});
  scene->trace += "b1 ";
  co_await ctx.wait_flag(FlagWait{&scene->a, 1, -1, 0, nullptr, "see a"});
  scene->trace += "b2 ";
}

Task two_branches(CollContext &ctx, CollArgs) {
  scene->trace += "start ";
  co_await both(ctx, branch_a(ctx), branch_b(ctx));
  scene->trace += "joined ";
  // After the join the algorithm waits as before, in the one slot of the single-waiter path.
  co_await ctx.wait_flag(FlagWait{&scene->b, 2, -1, 0, nullptr, "advance b again"});
  scene->trace += "end";
}

class Branches : public testing::Test {
 protected:
  void SetUp() override {
    scene = &scene_;
    bootstrap_ = detail::make_tcp_bootstrap(detail::BootstrapConfig{0, 1, "", 0, "", 5.0});
    detail::Plugin plugin;
    std::string why;
    if (!detail::open_plugin("ucx", &plugin, &why)) GTEST_SKIP() << "no ucx plugin: " << why;
    transport_ = std::make_unique<detail::Transport>(plugin, *bootstrap_, 0, 1, 5.0, -1);
  }
  void TearDown() override { scene = nullptr; }

  std::shared_ptr<Collective> start(double timeout_s) {
    CallLabel label{CollKind::allreduce, 1, "two-branch test", 0, 1, 0};
    return std::make_shared<Collective>(*transport_, scratch_, 0, 1, 0, timeout_s, label,
                                        two_branches, CollArgs{});
  }
  static bool advance(Collective &c) {
    bool progressed = false;
    return c.advance(&progressed);
  }

  Scene scene_;
  std::unique_ptr<detail::Bootstrap> bootstrap_;
  std::unique_ptr<detail::Transport> transport_;
  ScratchPool scratch_{-1};
};

TEST_F(Branches, ParentResumesOnlyWhenBothBranchesFinished) {
  auto c = start(5.0);
  EXPECT_FALSE(advance(*c));
  EXPECT_EQ(scene_.trace, "start a0 b0 ");  // both started, both suspended
  EXPECT_EQ(scene_.frames_alive, 2);
  scene_.b = 1;
  EXPECT_FALSE(advance(*c));
  EXPECT_EQ(scene_.trace, "start a0 b0 b1 ");  // b now waits for a
  EXPECT_NE(c->blocked_on_flag(), nullptr);
  scene_.a = 1;
  EXPECT_FALSE(advance(*c));
  EXPECT_EQ(scene_.trace, "start a0 b0 b1 a1 b2 joined ");
  EXPECT_EQ(scene_.frames_alive, 0);  // the branches' frames went with the join
  scene_.b = 2;
  EXPECT_TRUE(advance(*c));
  EXPECT_EQ(c->result(), BRAID_SUCCESS) << c->message();
  EXPECT_EQ(scene_.trace, "start a0 b0 b1 a1 b2 joined end");
}

TEST_F(Branches, BranchesAlreadyDoneDoNotSuspendTheParent) {
  scene_.a = 1;
  scene_.b = 2;
  auto c = start(5.0);
  EXPECT_TRUE(advance(*c));
  EXPECT_EQ(c->result(), BRAID_SUCCESS) << c->message();
  EXPECT_EQ(scene_.trace, "start a0 a1 b0 b1 b2 joined end");
}

TEST_F(Branches, FailureInOneBranchEndsTheCollectiveAndDropsTheOther) {
  scene_.a_fails = true;
  auto c = start(5.0);
  EXPECT_FALSE(advance(*c));
  scene_.a = 1;  // a resumes and fails while b still waits for its counter
  EXPECT_TRUE(advance(*c));
  EXPECT_EQ(c->result(), BRAID_ERR_TRANSPORT);
  EXPECT_NE(c->message().find("branch a failed"), std::string::npos) << c->message();
  EXPECT_EQ(scene_.trace, "start a0 b0 ");  // b never ran again, the parent never joined
  EXPECT_EQ(scene_.frames_alive, 0);
  scene_.b = 2;  // nothing is left to resume
  EXPECT_TRUE(advance(*c));
  EXPECT_EQ(scene_.trace, "start a0 b0 ");
}

TEST_F(Branches, AbortWhileBothSuspendedDestroysBothFrames) {
  auto c = start(5.0);
  EXPECT_FALSE(advance(*c));
  c->abort(BRAID_ERR_PEER_FAILED, "rank 3 failed", 3);
  EXPECT_TRUE(c->finished());
  EXPECT_EQ(scene_.frames_alive, 0);
  EXPECT_NE(c->message().find("rank 3 failed"), std::string::npos) << c->message();
}

// Branch b waits for branch a (peer -1), a waits for "rank 1": the timeout names rank 1, not
// this rank's own branch, whichever wait started first.
TEST_F(Branches, TimeoutBehindTheOtherBranchNamesWhatThatOneWaitsFor) {
  scene_.a_peer = 1;
  scene_.b = 1;
  auto c = start(0.2);
  const auto t0 = std::chrono::steady_clock::now();
  while (!advance(*c)) {
    ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << "no timeout";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(c->result(), BRAID_ERR_TIMEOUT);
  EXPECT_NE(c->message().find("waiting for rank 1 (same node, shared memory) to advance a"),
            std::string::npos)
      << c->message();
  EXPECT_EQ(scene_.frames_alive, 0);
}

}  // namespace
}  // namespace braid::coll
