// BRAID_VERBS_RECV_QUEUES: the grammar, its limits, and errors that name the offending class.
#include <gtest/gtest.h>

#include "recv_spec.hpp"

namespace braid::verbs {
namespace {

std::vector<QueueSpec> parse_ok(const char *text) {
  std::vector<QueueSpec> spec;
  std::string error;
  EXPECT_TRUE(parse_recv_queues(text, &spec, &error)) << text << ": " << error;
  return spec;
}

std::string parse_error(const char *text) {
  std::vector<QueueSpec> spec;
  std::string error;
  EXPECT_FALSE(parse_recv_queues(text, &spec, &error)) << text;
  return error;
}

TEST(RecvSpec, ParsesPerPeerSharedAndMixedSpecs) {
  auto p = parse_ok("P,4096,32:P,65536,16");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].kind, QueueKind::PerPeer);
  EXPECT_EQ(p[0].bytes, 4096u);
  EXPECT_EQ(p[0].count, 32u);
  EXPECT_EQ(p[1].bytes, 65536u);
  auto s = parse_ok("S,256,512:S,8192,256");
  EXPECT_EQ(s[0].kind, QueueKind::Shared);
  EXPECT_EQ(s[1].count, 256u);
  auto m = parse_ok("P,256,8:S,4096,64:P,65536,4");
  EXPECT_EQ(m[1].kind, QueueKind::Shared);
  EXPECT_EQ(format_recv_queues(m), "P,256,8:S,4096,64:P,65536,4");
}

// Shared queues only, and eager messages up to 64 KiB (header included) as before the default
// changed from the mixed P,4096,32:S,65536,64: the rendezvous threshold did not move with it.
TEST(RecvSpec, TheDefaultIsSharedQueuesUpTo64KiB) {
  auto d = parse_ok(std::string(kDefaultRecvQueues).c_str());
  ASSERT_FALSE(d.empty());
  for (const QueueSpec &q : d) EXPECT_EQ(q.kind, QueueKind::Shared) << format_recv_queues(d);
  EXPECT_EQ(d.back().bytes, 65536u);
}

TEST(RecvSpec, RejectsMalformedClassesNamingThem) {
  EXPECT_NE(parse_error("").find("empty"), std::string::npos);
  EXPECT_NE(parse_error("X,4096,32").find("class 'X,4096,32'"), std::string::npos);
  EXPECT_NE(parse_error("P,4096").find("3 fields"), std::string::npos);
  EXPECT_NE(parse_error("P,4096,32,7").find("3 fields"), std::string::npos);
  EXPECT_NE(parse_error("P,abc,32").find("bytes"), std::string::npos);
  EXPECT_NE(parse_error("P,4096,-1").find("count"), std::string::npos);
  EXPECT_NE(parse_error("P,64,32").find("bytes"), std::string::npos);  // below the header
  EXPECT_NE(parse_error("S,4096,0").find("count"), std::string::npos);
  EXPECT_NE(parse_error("P,4096,3").find("count"), std::string::npos);     // credits need 4
  EXPECT_NE(parse_error("S,2097152,8").find("bytes"), std::string::npos);  // over 1 MiB
  EXPECT_NE(parse_error("S,99999999999,8").find("bytes"), std::string::npos);
  EXPECT_NE(parse_error("P,4096,32:").find("class ''"), std::string::npos);
  EXPECT_NE(parse_error("S,8192,8:S,4096,8").find("increasing"), std::string::npos);
  EXPECT_NE(parse_error("S,4096,8:P,4096,8").find("increasing"), std::string::npos);
  EXPECT_NE(parse_error("P, 4096,32").find("bytes"), std::string::npos);
  EXPECT_NE(parse_error("S,256,1:S,512,1:S,1024,1:S,2048,1:S,4096,1:S,8192,1:S,16384,1:S,32768,1:"
                        "S,65536,1")
                .find("at most 8"),
            std::string::npos);
}

}  // namespace
}  // namespace braid::verbs
