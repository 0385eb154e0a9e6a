// The bootstrap wire format on its own: the decoders must refuse every malformed input, and
// as early as possible, because rank 0 runs them on bytes from anyone.
#include <gtest/gtest.h>

#include "bootstrap/wire.hpp"

namespace braid::detail::bs {
namespace {

using State = HelloParse::State;

Hello sample() {
  return Hello{kProtocolVersion, 3, 8, "s3cret", "node01"};
}

void put_u32_at(std::vector<uint8_t> &bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

TEST(BootstrapWire, HelloRoundTrips) {
  std::vector<uint8_t> bytes = encode_hello(sample());
  ASSERT_EQ(bytes.size(), kHelloFixedBytes + 6 + 4 + 6);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), "BRAIDBS1");
  HelloParse p = parse_hello(bytes);
  ASSERT_EQ(p.state, State::complete) << p.reason;
  EXPECT_EQ(p.consumed, bytes.size());
  EXPECT_EQ(p.hello.rank, 3u);
  EXPECT_EQ(p.hello.size, 8u);
  EXPECT_EQ(p.hello.key, "s3cret");
  EXPECT_EQ(p.hello.host, "node01");
}

TEST(BootstrapWire, HelloIntegersAreLittleEndian) {
  std::vector<uint8_t> bytes = encode_hello(Hello{kProtocolVersion, 0x01020304, 5, "", "h"});
  EXPECT_EQ(bytes[12], 0x04);
  EXPECT_EQ(bytes[15], 0x01);
}

TEST(BootstrapWire, EveryPrefixOfAHelloIsIncomplete) {
  std::vector<uint8_t> bytes = encode_hello(sample());
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_EQ(parse_hello(std::span(bytes.data(), n)).state, State::incomplete) << n;
}

TEST(BootstrapWire, EmptyKeyIsAValidHello) {
  std::vector<uint8_t> bytes = encode_hello(Hello{kProtocolVersion, 1, 2, "", "h"});
  HelloParse p = parse_hello(bytes);
  ASSERT_EQ(p.state, State::complete);
  EXPECT_EQ(p.hello.key, "");
}

TEST(BootstrapWire, GarbageIsRefusedAtTheFirstWrongByte) {
  std::vector<uint8_t> one{'X'};
  EXPECT_EQ(parse_hello(one).state, State::invalid);
  std::vector<uint8_t> http{'G', 'E', 'T', ' ', '/'};
  EXPECT_EQ(parse_hello(http).state, State::invalid);
  std::vector<uint8_t> bytes = encode_hello(sample());
  bytes[7] = '2';  // "BRAIDBS2"
  HelloParse p = parse_hello(std::span(bytes.data(), 8));
  EXPECT_EQ(p.state, State::invalid);
  EXPECT_NE(p.reason.find("magic"), std::string::npos);
}

TEST(BootstrapWire, WrongVersionIsRefused) {
  std::vector<uint8_t> bytes = encode_hello(sample());
  put_u32_at(bytes, 8, 2);
  HelloParse p = parse_hello(std::span(bytes.data(), kHelloFixedBytes));
  EXPECT_EQ(p.state, State::invalid);
  EXPECT_NE(p.reason.find("version 2"), std::string::npos) << p.reason;
}

TEST(BootstrapWire, OversizedLengthsAreRefusedBeforeTheirBytesArrive) {
  std::vector<uint8_t> bytes = encode_hello(sample());
  put_u32_at(bytes, 20, 1u << 30);  // key length
  EXPECT_EQ(parse_hello(std::span(bytes.data(), kHelloFixedBytes)).state, State::invalid);

  bytes = encode_hello(sample());
  put_u32_at(bytes, 20, kMaxKeyBytes + 1);
  EXPECT_EQ(parse_hello(std::span(bytes.data(), kHelloFixedBytes)).state, State::invalid);

  bytes = encode_hello(Hello{kProtocolVersion, 1, 2, "", "h"});
  put_u32_at(bytes, kHelloFixedBytes, 0xffffffffu);  // hostname length
  EXPECT_EQ(parse_hello(std::span(bytes.data(), kHelloFixedBytes + 4)).state, State::invalid);
}

TEST(BootstrapWire, LargestLegalHelloParses) {
  Hello h{kProtocolVersion, 1, 2, std::string(kMaxKeyBytes, 'k'), std::string(kMaxHostBytes, 'h')};
  std::vector<uint8_t> bytes = encode_hello(h);
  EXPECT_EQ(bytes.size(), kMaxHelloBytes);
  EXPECT_EQ(parse_hello(bytes).state, State::complete);
}

TEST(BootstrapWire, BadHostnamesAreRefused) {
  for (std::string host : {std::string(""), std::string("a b"), std::string("x\ny"),
                           std::string("\x1b[31m"), std::string(1, '\0')}) {
    std::vector<uint8_t> bytes = encode_hello(Hello{kProtocolVersion, 1, 2, "", host});
    EXPECT_EQ(parse_hello(bytes).state, State::invalid) << host;
  }
}

TEST(BootstrapWire, KeysCompareExactly) {
  EXPECT_TRUE(keys_equal("", ""));
  EXPECT_TRUE(keys_equal("abc", "abc"));
  EXPECT_FALSE(keys_equal("abc", "abd"));
  EXPECT_FALSE(keys_equal("abc", "ab"));
  EXPECT_FALSE(keys_equal("", "a"));
  EXPECT_FALSE(keys_equal(std::string("a\0", 2), "a"));
  std::string big(kMaxKeyBytes + 1, 'k');
  EXPECT_FALSE(keys_equal(big, big));  // beyond the limit never matches
}

TEST(BootstrapWire, RepliesDescribeTheProblem) {
  EXPECT_NE(describe_reply(static_cast<uint8_t>(Reply::bad_key)).find("key"), std::string::npos);
  EXPECT_NE(describe_reply(static_cast<uint8_t>(Reply::duplicate_rank)).find("rank"),
            std::string::npos);
  EXPECT_NE(describe_reply(0xff).find("unknown"), std::string::npos);
}

TEST(BootstrapWire, FrameHeaderRoundTripsLittleEndian) {
  FrameHeader h{static_cast<uint32_t>(FrameType::result), 0x11223344, 0x0102030405060708ull};
  HeaderBytes bytes = encode_header(h);
  EXPECT_EQ(bytes[0], 3);
  EXPECT_EQ(bytes[4], 0x44);
  EXPECT_EQ(bytes[8], 0x08);
  EXPECT_EQ(bytes[15], 0x01);
  FrameHeader back = decode_header(bytes);
  EXPECT_EQ(back.type, h.type);
  EXPECT_EQ(back.seq, h.seq);
  EXPECT_EQ(back.length, h.length);
}

TEST(BootstrapWire, FrameHeadersAreValidated) {
  auto t = [](FrameType f) { return static_cast<uint32_t>(f); };
  EXPECT_EQ(check_header({t(FrameType::result), 7, 100}, {FrameType::result}, 7), "");
  EXPECT_EQ(check_header({t(FrameType::result), 7, kMaxPayloadBytes}, {FrameType::result}, 7), "");
  EXPECT_NE(check_header({t(FrameType::error), 7, 0}, {FrameType::result}, 7), "");
  EXPECT_NE(check_header({99, 7, 0}, {FrameType::result, FrameType::error}, 7), "");
  EXPECT_NE(check_header({0, 7, 0}, {FrameType::result}, 7), "");
  EXPECT_NE(check_header({t(FrameType::result), 6, 0}, {FrameType::result}, 7), "");
  std::string why =
      check_header({t(FrameType::result), 7, kMaxPayloadBytes + 1}, {FrameType::result}, 7);
  EXPECT_NE(why.find("exceeds"), std::string::npos) << why;
}

TEST(BootstrapWire, HostsRoundTripAndMalformedHostsAreRefused) {
  std::vector<std::string> hosts{"a", "node-2", std::string(kMaxHostBytes, 'z')};
  std::vector<uint8_t> bytes = encode_hosts(hosts);
  EXPECT_LE(bytes.size(), max_hosts_payload(hosts.size()));
  auto back = decode_hosts(bytes, 3);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, hosts);

  EXPECT_FALSE(decode_hosts(bytes, 2));  // trailing bytes
  EXPECT_FALSE(decode_hosts(bytes, 4));  // too few
  EXPECT_FALSE(decode_hosts(std::span(bytes.data(), bytes.size() - 1), 3));
  std::vector<uint8_t> huge{0xff, 0xff, 0xff, 0xff, 'a'};
  EXPECT_FALSE(decode_hosts(huge, 1));
  EXPECT_FALSE(decode_hosts(encode_hosts({"bad host"}), 1));
}

TEST(BootstrapWire, ErrorReportsRoundTripAndAreValidated) {
  std::vector<uint8_t> bytes = encode_error(BRAID_ERR_TIMEOUT, "waited for rank 2");
  auto back = decode_error(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->code, BRAID_ERR_TIMEOUT);
  EXPECT_EQ(back->message, "waited for rank 2");

  EXPECT_LE(encode_error(BRAID_ERR_INTERNAL, std::string(10000, 'x')).size(), kMaxErrorPayload);
  EXPECT_FALSE(decode_error(std::vector<uint8_t>{1, 0, 0}));
  EXPECT_FALSE(decode_error(encode_error(BRAID_SUCCESS, "x")));
  EXPECT_FALSE(decode_error(encode_error(static_cast<braid_result_t>(999), "x")));
  std::vector<uint8_t> long_report = encode_error(BRAID_ERR_TIMEOUT, "");
  long_report.resize(kMaxErrorPayload + 1, 'x');
  EXPECT_FALSE(decode_error(long_report));
}

}  // namespace
}  // namespace braid::detail::bs
