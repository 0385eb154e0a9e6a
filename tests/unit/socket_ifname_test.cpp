// BRAID_SOCKET_IFNAME and the automatic choice of the addresses rank 0 (and braidrun's
// rendezvous service) publish, on interface lists shaped like real machines'.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "net/interfaces.hpp"

namespace braid::net {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Interface v4(std::string name, std::string address, bool loopback = false) {
  return {std::move(name), std::move(address), false, loopback};
}
Interface v6(std::string name, std::string address, bool loopback = false) {
  return {std::move(name), std::move(address), true, loopback};
}

// A cluster node: loopback, a docker bridge, Ethernet with IPv4 and IPv6, and InfiniBand.
const std::vector<Interface> kNode = {
    v4("lo", "127.0.0.1", true), v6("lo", "::1", true),      v4("eth0", "10.0.0.5"),
    v4("docker0", "172.17.0.1"), v6("eth0", "fd00::5"),      v4("ib0", "10.1.0.5"),
    v4("br-3f2a", "172.18.0.1"), v4("eth0.100", "10.2.0.5"),
};

std::vector<std::string> names(const AddressChoice &c) {
  std::vector<std::string> out;
  for (const Interface &i : c.chosen) out.push_back(i.name + "=" + i.address);
  return out;
}

TEST(SocketIfname, AutomaticSkipsLoopbackAndContainerBridgesAndPutsIpv4First) {
  const AddressChoice c = choose_addresses(kNode, nullptr);
  EXPECT_THAT(names(c),
              ElementsAre("eth0=10.0.0.5", "ib0=10.1.0.5", "eth0.100=10.2.0.5", "eth0=fd00::5"));
  EXPECT_THAT(c.reason, HasSubstr("chosen automatically"));
  EXPECT_THAT(c.reason, HasSubstr("lo (loopback)"));
  EXPECT_THAT(c.reason, HasSubstr("docker0 (container bridge)"));
  EXPECT_THAT(c.reason, HasSubstr("br-3f2a (container bridge)"));
}

TEST(SocketIfname, PrefixesSelect) {
  EXPECT_THAT(names(choose_addresses(kNode, "ib")), ElementsAre("ib0=10.1.0.5"));
  EXPECT_THAT(names(choose_addresses(kNode, "ib,eth")),
              ElementsAre("eth0=10.0.0.5", "ib0=10.1.0.5", "eth0.100=10.2.0.5", "eth0=fd00::5"));
  EXPECT_THAT(choose_addresses(kNode, "ib").reason, HasSubstr("BRAID_SOCKET_IFNAME=ib"));
}

TEST(SocketIfname, EqualsMeansExactNames) {
  EXPECT_THAT(names(choose_addresses(kNode, "=eth0")),
              ElementsAre("eth0=10.0.0.5", "eth0=fd00::5"));
}

TEST(SocketIfname, CaretExcludesAndKeepsTheAutomaticRules) {
  EXPECT_THAT(names(choose_addresses(kNode, "^eth")), ElementsAre("ib0=10.1.0.5"));
  EXPECT_THAT(names(choose_addresses(kNode, "^=eth0")),
              ElementsAre("ib0=10.1.0.5", "eth0.100=10.2.0.5"));
}

TEST(SocketIfname, AnIncludedLoopbackIsTheUsersChoice) {
  EXPECT_THAT(names(choose_addresses(kNode, "lo")), ElementsAre("lo=127.0.0.1", "lo=::1"));
  EXPECT_THAT(names(choose_addresses(kNode, "docker")), ElementsAre("docker0=172.17.0.1"));
}

TEST(SocketIfname, LoopbackOnlyWhenNothingElseIsLeftAndTheReasonSaysSo) {
  const AddressChoice c =
      choose_addresses({v4("lo", "127.0.0.1", true), v4("docker0", "172.17.0.1")}, nullptr);
  EXPECT_THAT(names(c), ElementsAre("lo=127.0.0.1"));
  EXPECT_THAT(c.reason, HasSubstr("only ranks on this host can connect"));
  EXPECT_THAT(names(choose_addresses(kNode, "^eth,ib")), ElementsAre("lo=127.0.0.1", "lo=::1"));
}

TEST(SocketIfname, NoMatchIsAnErrorListingTheInterfaces) {
  const AddressChoice c = choose_addresses(kNode, "myri");
  EXPECT_TRUE(c.chosen.empty());
  EXPECT_THAT(c.error, HasSubstr("BRAID_SOCKET_IFNAME=myri matches no interface"));
  EXPECT_THAT(c.error, HasSubstr("10.1.0.5 (ib0)"));
  EXPECT_THAT(choose_addresses(kNode, "^").error, HasSubstr("names no interface"));
  EXPECT_THAT(choose_addresses({}, nullptr).error, HasSubstr("no network interface"));
}

TEST(SocketIfname, FilterSyntax) {
  IfnameFilter f = parse_ifname_filter("^=eth0,,ib0");
  EXPECT_TRUE(f.exclude);
  EXPECT_TRUE(f.exact);
  EXPECT_THAT(f.names, ElementsAre("eth0", "ib0"));
  EXPECT_FALSE(filter_matches(f, "eth0"));
  EXPECT_TRUE(filter_matches(f, "eth01"));
  EXPECT_TRUE(filter_matches(parse_ifname_filter("eth"), "eth1"));
  EXPECT_FALSE(filter_matches(parse_ifname_filter("eth"), "veth1"));
}

TEST(SocketIfname, ThisMachineListsLoopback) {
  std::string error;
  const std::vector<Interface> all = list_interfaces(&error);
  ASSERT_EQ(error, "");
  bool found = false;
  for (const Interface &i : all) found |= i.loopback && i.address == "127.0.0.1";
  EXPECT_TRUE(found) << describe(all);
}

}  // namespace
}  // namespace braid::net
