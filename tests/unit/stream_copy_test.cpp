// Copies into a collective's result that stream past the cache: the copy itself at every
// alignment of source and destination and around its 64-byte steps, the bounds that decide when
// a call streams (NodeChannel::streams; between them stream_choice_test.cpp), and the cache size
// they are measured against (hwloc's last-level cache, Topology::last_level_cache).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "intranode/node_channel.hpp"
#include "kernels/stream_copy.hpp"
#include "memory/topology.hpp"
#include "node/node_map.hpp"

namespace braid::coll {
namespace {

TEST(StreamCopy, CopiesEveryByteAtEveryAlignment) {
  std::vector<uint8_t> src(4096 + 64), dst(4096 + 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{63}, size_t{64},
                       size_t{65}, size_t{127}, size_t{128}, size_t{1000}, size_t{4096}})
    for (size_t s_off = 0; s_off < 17; s_off += 3)
      for (size_t d_off = 0; d_off < 17; ++d_off) {
        std::fill(dst.begin(), dst.end(), uint8_t{0xEE});
        copy_streaming(dst.data() + d_off, src.data() + s_off, bytes);
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= d_off && i < d_off + bytes;
          ASSERT_EQ(dst[i], inside ? src[i - d_off + s_off] : uint8_t{0xEE})
              << bytes << " bytes, source +" << s_off << ", destination +" << d_off << ", byte "
              << i;
        }
      }
}

TEST(StreamCopy, CopiesLargeBuffersWhole) {
  const size_t bytes = (size_t{3} << 20) + 13;
  std::vector<uint32_t> src(bytes / 4 + 1), dst(bytes / 4 + 1, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint32_t>(i * 2654435761u);
  copy_streaming(reinterpret_cast<char *>(dst.data()) + 1,
                 reinterpret_cast<const char *>(src.data()) + 1, bytes);
  EXPECT_EQ(std::memcmp(reinterpret_cast<char *>(dst.data()) + 1,
                        reinterpret_cast<const char *>(src.data()) + 1, bytes),
            0);
  EXPECT_EQ(reinterpret_cast<const uint8_t *>(dst.data())[0], 0);
}

TEST(StreamCopy, CopyResultTakesEitherPath) {
  const std::string from = "the result of a collective";
  std::string a(from.size(), '-'), b(from.size(), '-');
  copy_result(a.data(), from.data(), from.size(), true);
  copy_result(b.data(), from.data(), from.size(), false);
  EXPECT_EQ(a, from);
  EXPECT_EQ(b, from);
}

class Streams : public testing::Test {
 protected:
  Streams()
      : bytes_(NodeChannel::segment_bytes(2)),
        base_(static_cast<char *>(std::aligned_alloc(4096, bytes_)), &std::free),
        map_(detail::make_node_map({"host", "host"}, 0)) {
    std::memset(base_.get(), 0, bytes_);
    ch_ = std::make_unique<NodeChannel>(base_.get(), map_);
  }

  size_t bytes_;
  std::unique_ptr<char, decltype(&std::free)> base_;
  detail::NodeMap map_;
  std::unique_ptr<NodeChannel> ch_;
};

TEST_F(Streams, NothingStreamsWhileTheCacheIsUnknown) {
  EXPECT_FALSE(ch_->streams(CollKind::alltoall, size_t{1} << 40));
  ch_->set_shared_cache(0, 4);
  EXPECT_FALSE(ch_->streams(CollKind::alltoall, size_t{1} << 40));
  EXPECT_EQ(ch_->streamed_calls(), 0u);
}

TEST_F(Streams, CallsStreamPastHalfTheCacheAndAlwaysPastFourTimesIt) {
  // 32 MiB shared by 2 ranks (the EPYC VM's L3 at 2 ranks): half is 16 MiB, 8 MiB a rank.
  ch_->set_shared_cache(size_t{32} << 20, 2);
  EXPECT_FALSE(ch_->streams(CollKind::alltoall, size_t{8} << 20));
  // Just past half: the rank's timings decide (StreamChoice); a size's first call goes the way
  // the share suggests, plain below once the cache, streamed from there.
  EXPECT_FALSE(ch_->streams(CollKind::alltoall, (size_t{8} << 20) + 1));
  ch_->end_turn();
  EXPECT_TRUE(ch_->streams(CollKind::alltoall, size_t{16} << 20));
  ch_->end_turn();
  // Past four times the cache every call streams, nothing timed.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(ch_->streams(CollKind::alltoall, (size_t{64} << 20) + 1));
  EXPECT_EQ(ch_->stream_choice(CollKind::alltoall).rate(true, (size_t{64} << 20) + 1), 0.0);
  // The same calls with 4 ranks on that cache: half the bytes a rank.
  ch_->set_shared_cache(size_t{32} << 20, 4);
  EXPECT_FALSE(ch_->streams(CollKind::alltoall, size_t{4} << 20));
  EXPECT_TRUE(ch_->streams(CollKind::alltoall, (size_t{32} << 20) + 1));
  EXPECT_EQ(ch_->streamed_calls(), 5u);
  // BRAID_CACHE_BYTES=1: every call that copies anything streams.
  ch_->set_shared_cache(1, 2);
  EXPECT_TRUE(ch_->streams(CollKind::alltoall, 1));
  EXPECT_EQ(ch_->streamed_calls(), 6u);
}

TEST(StreamTopology, LastLevelCacheIsTheOneSysfsNames) {
  const detail::Topology &topo = detail::Topology::get();
  const detail::Topology::Cache c = topo.last_level_cache();
  // The kernel's own account of CPU 0's caches: the highest level listed is the last.
  int level = 0;
  size_t bytes = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream lv(dir + "level"), sz(dir + "size"), ty(dir + "type");
    int l = 0;
    std::string size, type;
    if (!(lv >> l) || !(sz >> size) || !(ty >> type) || type == "Instruction") continue;
    if (l < level || l < 2) continue;
    level = l;
    bytes = std::stoull(size) * (size.back() == 'K' ? 1024 : size.back() == 'M' ? 1 << 20 : 1);
  }
  if (level == 0 || level > 3) GTEST_SKIP() << "CPU 0's last cache in sysfs: L" << level;
  EXPECT_EQ(c.bytes, bytes) << "L" << level;
  EXPECT_GE(c.cores, 1);
  EXPECT_LE(c.cores, topo.cores());
}

}  // namespace
}  // namespace braid::coll
