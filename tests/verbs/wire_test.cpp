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
  auto unknown = message(static_cast<MsgType>(10), nullptr, 0);
  EXPECT_FALSE(parse_message(unknown.data(), unknown.size(), kLimits, &m, &why));
  EXPECT_NE(why.find("unknown message type 10"), std::string::npos);
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

TEST(Wire, ParsesAdvertsAndRetracts) {
  Message m;
  std::string why;
  AdvertBody ad{0x7000, 65536, 77, 2, 5, 0};
  auto a = message(MsgType::Advert, &ad, sizeof ad, 0, 0);
  ASSERT_TRUE(parse_message(a.data(), a.size(), kLimits, &m, &why)) << why;
  EXPECT_EQ(m.header.tag, 0x1234u);
  EXPECT_EQ(m.header.msn, 7u);
  EXPECT_EQ(m.advert.capacity, 65536u);
  EXPECT_EQ(m.advert.rkey, 77u);
  EXPECT_EQ(m.advert.ahead, 2u);
  EXPECT_EQ(m.advert.serial, 5u);
  for (MsgType t : {MsgType::Retract, MsgType::RetractAck}) {
    RetractBody r{5, 1000};
    auto rb = message(t, &r, sizeof r, 0, 0);
    ASSERT_TRUE(parse_message(rb.data(), rb.size(), kLimits, &m, &why)) << why;
    EXPECT_EQ(m.retract.serial, 5u);
    EXPECT_EQ(m.retract.watermark, 1000u);
  }
}

TEST(Wire, RejectsMalformedAdvertsAndRetracts) {
  Message m;
  std::string why;
  auto short_advert = message(MsgType::Advert, "xy", 2, 0, 0);
  EXPECT_FALSE(parse_message(short_advert.data(), short_advert.size(), kLimits, &m, &why));
  EXPECT_NE(why.find("advert of 2 body bytes"), std::string::npos);
  AdvertBody wrap{~uint64_t{0} - 10, 100, 1, 0, 1, 0};
  auto w = message(MsgType::Advert, &wrap, sizeof wrap, 0, 0);
  EXPECT_FALSE(parse_message(w.data(), w.size(), kLimits, &m, &why));
  EXPECT_NE(why.find("impossible range"), std::string::npos);
  AdvertBody huge{0x1000, uint64_t{1} << 50, 1, 0, 1, 0};
  auto h = message(MsgType::Advert, &huge, sizeof huge, 0, 0);
  EXPECT_FALSE(parse_message(h.data(), h.size(), kLimits, &m, &why));
  auto long_retract = message(MsgType::Retract, "0123456789", 10, 0, 0);
  EXPECT_FALSE(parse_message(long_retract.data(), long_retract.size(), kLimits, &m, &why));
  EXPECT_NE(why.find("retract message of 10 body bytes"), std::string::npos);
  // A direct message has no header: a header that says it is one is malformed.
  auto direct = message(MsgType::Direct, nullptr, 0);
  EXPECT_FALSE(parse_message(direct.data(), direct.size(), kLimits, &m, &why));
  EXPECT_NE(why.find("unknown message type 8"), std::string::npos);
  // Nor does a headerless one.
  auto headerless = message(MsgType::Headerless, "abcd", 4);
  EXPECT_FALSE(parse_message(headerless.data(), headerless.size(), kLimits, &m, &why));
  EXPECT_NE(why.find("unknown message type 9"), std::string::npos);
}

// A headerless message's immediate data: the msn's low 24 bits and the tag's step from the
// previous one, every step an 8-bit signed delta can hold.
TEST(Wire, HeaderlessImmediateCarriesMsnAndDelta) {
  for (uint32_t msn : {0u, 1u, 0xffffffu, 0x1234567u})
    for (int delta = kHeaderlessMinDelta; delta <= kHeaderlessMaxDelta; ++delta) {
      const uint32_t imm = headerless_imm(msn, delta);
      EXPECT_EQ(imm >> 8, msn & 0xffffffu);
      EXPECT_EQ(headerless_delta(imm), delta);
    }
}

// A message goes without its header only where the header would add a packet: a payload that
// fills its last packet, or leaves less room in it than a header needs; never an empty one.
TEST(Wire, HeaderCostsAPacketOnlyWhereThePayloadFillsItsLastPacket) {
  constexpr size_t kHeader = sizeof(Header);
  for (size_t mtu : {size_t{256}, size_t{1024}, size_t{4096}}) {
    EXPECT_FALSE(header_costs_a_packet(0, mtu));
    EXPECT_FALSE(header_costs_a_packet(8, mtu));
    EXPECT_FALSE(header_costs_a_packet(mtu - kHeader, mtu));
    EXPECT_TRUE(header_costs_a_packet(mtu - kHeader + 1, mtu));
    EXPECT_TRUE(header_costs_a_packet(mtu, mtu));
    EXPECT_FALSE(header_costs_a_packet(mtu + 1, mtu));
    EXPECT_TRUE(header_costs_a_packet(2 * mtu, mtu));
    EXPECT_FALSE(header_costs_a_packet(2 * mtu - kHeader, mtu));
  }
  EXPECT_FALSE(header_costs_a_packet(4096, 0));
}

}  // namespace
}  // namespace braid::verbs
