// A broadcast's or scatter's root offers its braid_mem_alloc buffer for zero copy
// (collectives/intranode/direct.hpp: offer_root_buffer, root_mapped_min) from 16 KiB per reader
// on ranks with a core each, and only from the measured crossovers (1 MiB, 512 KiB) where ranks
// share cores: zero copy holds the root until every reader has copied, which on shared cores is a
// wait for the scheduler (4 ranks on 2 cores: 16-256 KiB broadcasts 22-34 µs against 2-17).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "intranode/direct.hpp"
#include "intranode/node_channel.hpp"
#include "memory/mem_api.hpp"
#include "node/node_map.hpp"

namespace braid::coll {
namespace {

class RootOffer : public testing::Test {
 protected:
  RootOffer()
      : bytes_(NodeChannel::segment_bytes(2)),
        base_(static_cast<char *>(std::aligned_alloc(4096, bytes_)), &std::free),
        map_(detail::make_node_map({"host", "host"}, 0)),
        buf_(detail::mem_alloc(kBuffer, BRAID_NUMA_LOCAL, -1)) {
    std::memset(base_.get(), 0, bytes_);
    ch_ = std::make_unique<NodeChannel>(base_.get(), map_);
    ch_->set_cma_mode(detail::CmaMode::off);  // the mapped buffer or nothing
  }
  ~RootOffer() override { detail::mem_free(buf_); }

  // Whether a root of `kind` offers its mapped buffer when each reader copies `copied` bytes.
  bool mapped(CollKind kind, size_t copied) {
    return offer_root_buffer(*ch_, kind, buf_, kBuffer, copied).valid();
  }

  static constexpr size_t kBuffer = size_t{4} << 20;
  size_t bytes_;
  std::unique_ptr<char, decltype(&std::free)> base_;
  detail::NodeMap map_;
  void *buf_;
  std::unique_ptr<NodeChannel> ch_;
};

TEST_F(RootOffer, WithACoreEachFromSixteenKiB) {
  for (CollKind kind : {CollKind::broadcast, CollKind::scatter}) {
    EXPECT_FALSE(mapped(kind, kDirectMinBytes - 1));
    EXPECT_TRUE(mapped(kind, kDirectMinBytes));
    EXPECT_EQ(root_mapped_min(*ch_, kind), kDirectMinBytes);
  }
}

TEST_F(RootOffer, OnSharedCoresFromTheMeasuredCrossovers) {
  ch_->set_oversubscribed(true);
  EXPECT_FALSE(mapped(CollKind::broadcast, size_t{512} << 10));
  EXPECT_TRUE(mapped(CollKind::broadcast, size_t{1} << 20));
  EXPECT_FALSE(mapped(CollKind::scatter, size_t{256} << 10));
  EXPECT_TRUE(mapped(CollKind::scatter, size_t{512} << 10));
  // An ordinary buffer is never mapped, whatever the size.
  std::unique_ptr<char[]> plain(new char[kBuffer]);
  EXPECT_FALSE(offer_root_buffer(*ch_, CollKind::broadcast, plain.get(), kBuffer, kBuffer).valid());
}

}  // namespace
}  // namespace braid::coll
