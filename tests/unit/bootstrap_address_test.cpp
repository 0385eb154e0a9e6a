// Parsing and printing of BRAID_BOOTSTRAP-style host:port strings.
#include <gtest/gtest.h>

#include "bootstrap/address.hpp"
#include "error.hpp"

namespace braid::detail::bs {
namespace {

TEST(BootstrapAddress, ParsesIpv4AndNames) {
  HostPort a = parse_host_port("127.0.0.1:4242");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 4242);
  HostPort b = parse_host_port("node-17.cluster:1");
  EXPECT_EQ(b.host, "node-17.cluster");
  EXPECT_EQ(b.port, 1);
  EXPECT_EQ(parse_host_port("h:65535").port, 65535);
}

TEST(BootstrapAddress, ParsesBracketedIpv6) {
  HostPort a = parse_host_port("[::1]:4242");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 4242);
  HostPort b = parse_host_port("[fe80::1%eth0]:80");
  EXPECT_EQ(b.host, "fe80::1%eth0");
}

TEST(BootstrapAddress, RejectsMalformedText) {
  for (const char *bad :
       {"", "host", "host:", ":4242", "host:0", "host:65536", "host:99999999999", "host:42a",
        "host:-1", "host: 42", "::1:4242", "[::1]", "[::1]4242", "[::1:4242", "[]:4242"}) {
    try {
      parse_host_port(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Failure &f) {
      EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP) << bad;
      // The message quotes the text so the user can see what was wrong.
      EXPECT_NE(f.message().find(std::string("'") + bad + "'"), std::string::npos) << f.message();
    }
  }
}

TEST(BootstrapAddress, UnbracketedIpv6ExplainsTheFix) {
  try {
    parse_host_port("fe80::1:4242");
    FAIL();
  } catch (const Failure &f) {
    EXPECT_NE(f.message().find("brackets"), std::string::npos) << f.message();
  }
}

TEST(BootstrapAddress, FormatsAndRoundTrips) {
  EXPECT_EQ(format_host_port("127.0.0.1", 80), "127.0.0.1:80");
  EXPECT_EQ(format_host_port("::1", 80), "[::1]:80");
  for (const char *text : {"10.1.2.3:7", "[2001:db8::5]:65000", "login01:4242"}) {
    HostPort hp = parse_host_port(text);
    EXPECT_EQ(format_host_port(hp.host, hp.port), text);
  }
}

}  // namespace
}  // namespace braid::detail::bs
