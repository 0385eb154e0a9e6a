// Rank 0's published addresses as they travel through PMIx and braidrun's rendezvous service.
#include "job/root_contact.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "error.hpp"

namespace braid::detail {
namespace {

using ::testing::HasSubstr;

TEST(RootContact, AddressesRoundTripWithIpv6InBrackets) {
  const std::vector<bs::HostPort> addresses = {{"10.0.0.5", 41000}, {"fd00::5", 41000}};
  const std::string text = encode_addresses(addresses);
  EXPECT_EQ(text, "10.0.0.5:41000,[fd00::5]:41000");
  const auto back = decode_addresses(text, "test");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].host, "fd00::5");
  EXPECT_EQ(back[1].port, 41000);
}

TEST(RootContact, MalformedAddressesNameTheirSource) {
  for (const char *bad : {"", "10.0.0.5", "10.0.0.5:0", "a:1,,b:2", "[fd00::5:1"}) {
    try {
      decode_addresses(bad, "rank 0's braid.bootstrap from PMIx");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Failure &f) {
      EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
      EXPECT_THAT(f.message(), HasSubstr("rank 0's braid.bootstrap from PMIx: "));
    }
  }
}

TEST(RootContact, JobKeysAreFreshHex) {
  const std::string a = random_job_key(), b = random_job_key();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace braid::detail
