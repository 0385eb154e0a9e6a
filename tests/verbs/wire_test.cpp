// The verbs message format: parse_message accepts exactly what a correct peer sends and names
// what is wrong with anything else.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "wire.hpp"

namespace braid::verbs {
namespace {

std::vector<uint8_t> message(MsgType type, const void *body, size_t body_len, uint8_t klass = 0,
                             uint32_t length = UINT32_MAX) {
  Header h{};
  h.type = static_cast<uint8_t>(type);
  h.klass = klass;
  h.msn = 7;
  h.tag = 0x1234;
  h.length = length == UINT32_MAX ? static_cast<uint32_t>(body_len) : length;
  std::vector<uint8_t> bytes(sizeof h + body_len);
  std::memcpy(bytes.data(), &h, sizeof h);
  if (body_len > 0) std::memcpy(bytes.data() + sizeof h, body, body_len);
  return bytes;
}

const WireLimits kLimits{0, 2, 32};

TEST(Wire, ParsesEagerRtsFinAndCredit) {
  const char payload[] = "hello";
  auto eager = message(MsgType::Eager, payload, 5);
  Message m;
  std::string why;
  ASSERT_TRUE(parse_message(eager.data(), eager.size(), kLimits, &m, &why)) << why;
  EXPECT_EQ(m.header.tag, 0x1234u);
  EXPECT_EQ(m.header.msn, 7u);
  ASSERT_EQ(m.payload_len, 5u);
  EXPECT_EQ(std::memcmp(m.payload, "hello", 5), 0);

  RtsBody rts{0x1000, 1 << 20, 42, 99, 0};
  auto r = message(MsgType::Rts, &rts, sizeof rts, 0, 0);
  ASSERT_TRUE(parse_message(r.data(), r.size(), kLimits, &m, &why)) << why;
  EXPECT_EQ(m.rts.length, uint64_t{1} << 20);
  EXPECT_EQ(m.rts.rkey, 99u);

  FinBody fin{42, 1 << 20, 0, 0};
  auto f = message(MsgType::Fin, &fin, sizeof fin, 0, 0);
  ASSERT_TRUE(parse_message(f.data(), f.size(), kLimits, &m, &why)) << why;
  EXPECT_EQ(m.fin.send_id, 42u);

  auto c = message(MsgType::Credit, nullptr, 0);
  ASSERT_TRUE(parse_message(c.data(), c.size(), kLimits, &m, &why)) << why;
}

TEST(Wire, RejectsEveryInconsistentField) {
  Message m;
  std::string why;
  auto eager = message(MsgType::Eager, "abcd", 4);
  EXPECT_FALSE(parse_message(eager.data(), 10, kLimits, &m, &why));  // shorter than a header
  EXPECT_NE(why.find("shorter"), std::string::npos);
  auto lying = message(MsgType::Eager, "abcd", 4, 0, 400);
  EXPECT_FALSE(parse_message(lying.data(), lying.size(), kLimits, &m, &why));
  EXPECT_NE(why.find("400"), std::string::npos);
  auto wrong_class = message(MsgType::Eager, "abcd", 4, 1);
  EXPECT_FALSE(parse_message(wrong_class.data(), wrong_class.size(), kLimits, &m, &why));
  EXPECT_NE(why.find("class"), std::string::npos);
  auto unknown = message(static_cast<MsgType>(9), nullptr, 0);
  EXPECT_FALSE(parse_message(unknown.data(), unknown.size(), kLimits, &m, &why));
  EXPECT_NE(why.find("unknown message type 9"), std::string::npos);
  auto short_rts = message(MsgType::Rts, "x", 1, 0, 0);
  EXPECT_FALSE(parse_message(short_rts.data(), short_rts.size(), kLimits, &m, &why));
  RtsBody huge{~uint64_t{0} - 10, 100, 1, 1, 0};
  auto wrap = message(MsgType::Rts, &huge, sizeof huge, 0, 0);
  EXPECT_FALSE(parse_message(wrap.data(), wrap.size(), kLimits, &m, &why));
  auto credit_body = message(MsgType::Credit, "x", 1, 0, 0);
  EXPECT_FALSE(parse_message(credit_body.data(), credit_body.size(), kLimits, &m, &why));
  auto too_many = message(MsgType::Credit, nullptr, 0);
  reinterpret_cast<Header *>(too_many.data())->credits = 33;
  EXPECT_FALSE(parse_message(too_many.data(), too_many.size(), kLimits, &m, &why));
  EXPECT_NE(why.find("33 credits"), std::string::npos);
}

}  // namespace
}  // namespace braid::verbs
