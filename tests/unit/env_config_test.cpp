// The environment contract: parse_env_config with a map-backed EnvLookup, and the small parsers
// it shares with the tools. Every malformed value must fail naming the variable and the value.
#include "config/env_config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "env_lookup.hpp"
#include "error.hpp"

namespace braid::detail {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

EnvConfig parse(const Vars &vars) {
  return parse_env_config(lookup(vars));
}

// Runs parse_env_config, expecting a Failure; returns it (or a sentinel when nothing threw).
Failure parse_failure(const Vars &vars) {
  try {
    EnvConfig cfg = parse(vars);
    ADD_FAILURE() << "parse_env_config accepted the environment (rank " << cfg.rank << ", size "
                  << cfg.size << ")";
  } catch (const Failure &f) {
    return f;
  }
  return Failure(BRAID_SUCCESS, "<no failure>");
}

// A complete, valid 4-rank job on one host; tests tweak one variable at a time.
Vars job(int rank = 1, int size = 4) {
  return {{"BRAID_RANK", std::to_string(rank)},
          {"BRAID_SIZE", std::to_string(size)},
          {"BRAID_BOOTSTRAP", "node01:29500"}};
}

// --- No job / complete job ------------------------------------------------------------------

TEST(EnvConfig, NoVariablesIsAOneRankWorld) {
  EnvConfig cfg = parse({});
  EXPECT_FALSE(cfg.launched);
  EXPECT_EQ(cfg.rank, 0);
  EXPECT_EQ(cfg.size, 1);
  EXPECT_EQ(cfg.local_rank, 0);
  EXPECT_EQ(cfg.local_size, 1);
  EXPECT_EQ(cfg.bootstrap_host, "");
  EXPECT_EQ(cfg.bootstrap_port, 0);
  EXPECT_EQ(cfg.job_key, "");
  EXPECT_EQ(cfg.transport, "auto");
  EXPECT_DOUBLE_EQ(cfg.timeout_s, 300.0);
}

TEST(EnvConfig, UnrelatedVariablesAreIgnored) {
  EnvConfig cfg = parse({{"OMPI_COMM_WORLD_RANK", "3"}, {"PMI_SIZE", "8"}, {"BRAID_DEBUG", "x"}});
  EXPECT_FALSE(cfg.launched);
  EXPECT_EQ(cfg.rank, 0);
  EXPECT_EQ(cfg.size, 1);
}

TEST(EnvConfig, OneRankWorldStillHonoursTransportTimeoutAndJobKey) {
  EnvConfig cfg =
      parse({{"BRAID_TRANSPORT", "ucx"}, {"BRAID_TIMEOUT", "12.5"}, {"BRAID_JOB_KEY", "k1"}});
  EXPECT_FALSE(cfg.launched);
  EXPECT_EQ(cfg.transport, "ucx");
  EXPECT_DOUBLE_EQ(cfg.timeout_s, 12.5);
  EXPECT_EQ(cfg.job_key, "k1");
}

TEST(EnvConfig, FullContract) {
  EnvConfig cfg = parse({{"BRAID_RANK", "5"},
                         {"BRAID_SIZE", "8"},
                         {"BRAID_BOOTSTRAP", "10.0.0.7:29500"},
                         {"BRAID_LOCAL_RANK", "1"},
                         {"BRAID_LOCAL_SIZE", "4"},
                         {"BRAID_JOB_KEY", "job-42"},
                         {"BRAID_TRANSPORT", "verbs"},
                         {"BRAID_TIMEOUT", "60"}});
  EXPECT_TRUE(cfg.launched);
  EXPECT_EQ(cfg.rank, 5);
  EXPECT_EQ(cfg.size, 8);
  EXPECT_EQ(cfg.local_rank, 1);
  EXPECT_EQ(cfg.local_size, 4);
  EXPECT_EQ(cfg.bootstrap_host, "10.0.0.7");
  EXPECT_EQ(cfg.bootstrap_port, 29500);
  EXPECT_EQ(cfg.job_key, "job-42");
  EXPECT_EQ(cfg.transport, "verbs");
  EXPECT_DOUBLE_EQ(cfg.timeout_s, 60.0);
}

TEST(EnvConfig, LocalRankAndSizeDefaultToTheGlobalOnes) {
  EnvConfig cfg = parse(job(3, 4));
  EXPECT_TRUE(cfg.launched);
  EXPECT_EQ(cfg.local_rank, 3);
  EXPECT_EQ(cfg.local_size, 4);
}

TEST(EnvConfig, SizeOneJobNeedsNoBootstrap) {
  EnvConfig cfg = parse({{"BRAID_RANK", "0"}, {"BRAID_SIZE", "1"}});
  EXPECT_TRUE(cfg.launched);
  EXPECT_EQ(cfg.rank, 0);
  EXPECT_EQ(cfg.size, 1);
  EXPECT_EQ(cfg.bootstrap_host, "");
  EXPECT_EQ(cfg.bootstrap_port, 0);
}

TEST(EnvConfig, LargestAllowedSize) {
  EnvConfig cfg = parse(job((1 << 20) - 1, 1 << 20));
  EXPECT_EQ(cfg.size, 1 << 20);
  EXPECT_EQ(cfg.rank, (1 << 20) - 1);
}

// --- Partial environments -------------------------------------------------------------------

TEST(EnvConfig, SizeWithoutRankNamesRank) {
  Failure f = parse_failure({{"BRAID_SIZE", "4"}, {"BRAID_BOOTSTRAP", "h:1"}});
  EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
  EXPECT_THAT(f.message(), HasSubstr("BRAID_RANK is unset"));
}

TEST(EnvConfig, RankWithoutSizeNamesSize) {
  Failure f = parse_failure({{"BRAID_RANK", "0"}, {"BRAID_BOOTSTRAP", "h:1"}});
  EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
  EXPECT_THAT(f.message(), HasSubstr("BRAID_SIZE is unset"));
}

TEST(EnvConfig, SizeWithoutRankOrBootstrapNamesRank) {
  Failure f = parse_failure({{"BRAID_SIZE", "1"}});
  EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
  EXPECT_THAT(f.message(), HasSubstr("BRAID_RANK is unset"));
  EXPECT_THAT(f.message(), Not(HasSubstr("BRAID_BOOTSTRAP")));
}

TEST(EnvConfig, RankWithoutSizeOrBootstrapNamesSize) {
  Failure f = parse_failure({{"BRAID_RANK", "0"}});
  EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
  EXPECT_THAT(f.message(), HasSubstr("BRAID_SIZE is unset"));
}

TEST(EnvConfig, BootstrapAloneIsAnIncompleteJob) {
  Failure f = parse_failure({{"BRAID_BOOTSTRAP", "h:1"}});
  EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
  EXPECT_THAT(f.message(), HasSubstr("BRAID_RANK"));
}

// Regression (was a bug): with only BRAID_BOOTSTRAP set the message reads "BRAID_RANK is unset
// while BRAID_SIZE and BRAID_BOOTSTRAP are set", claiming BRAID_SIZE is set when it is not.
TEST(EnvConfig, BootstrapAloneSaysBothRankAndSizeAreUnset) {
  Failure f = parse_failure({{"BRAID_BOOTSTRAP", "h:1"}});
  EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
  EXPECT_THAT(f.message(), HasSubstr("BRAID_RANK"));
  EXPECT_THAT(f.message(), HasSubstr("BRAID_SIZE"));
  EXPECT_THAT(f.message(), Not(HasSubstr("while BRAID_SIZE")));
}

TEST(EnvConfig, SizeAboveOneWithoutBootstrap) {
  Failure f = parse_failure({{"BRAID_RANK", "0"}, {"BRAID_SIZE", "2"}});
  EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
  EXPECT_THAT(f.message(), AllOf(HasSubstr("BRAID_BOOTSTRAP"), HasSubstr("BRAID_SIZE=2")));
}

// --- Malformed rank and size ----------------------------------------------------------------

struct BadValue {
  const char *variable;
  const char *value;
};
std::ostream &operator<<(std::ostream &out, const BadValue &b) {
  return out << b.variable << "='" << b.value << "'";
}

class EnvConfigBadRankOrSize : public ::testing::TestWithParam<BadValue> {};

TEST_P(EnvConfigBadRankOrSize, NamesVariableAndValue) {
  const BadValue &bad = GetParam();
  Vars vars = job(1, 4);
  vars[bad.variable] = bad.value;
  Failure f = parse_failure(vars);
  EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(f.message(), HasSubstr(bad.variable));
  EXPECT_THAT(f.message(), HasSubstr(bad.value));
}

INSTANTIATE_TEST_SUITE_P(
    Values, EnvConfigBadRankOrSize,
    ::testing::Values(BadValue{"BRAID_RANK", "4"},        // == size
                      BadValue{"BRAID_RANK", "17"},       // > size
                      BadValue{"BRAID_RANK", "-1"},       // negative
                      BadValue{"BRAID_RANK", "one"},      // non-numeric
                      BadValue{"BRAID_RANK", "1x"},       // trailing junk
                      BadValue{"BRAID_RANK", "1 "},       // trailing space
                      BadValue{"BRAID_RANK", " 1"},       // leading space
                      BadValue{"BRAID_RANK", "+1"},       // sign is not part of the contract
                      BadValue{"BRAID_RANK", "0x1"},      // no hex
                      BadValue{"BRAID_RANK", "1.0"},      // no fractions
                      BadValue{"BRAID_RANK", ""},         // empty
                      BadValue{"BRAID_SIZE", "0"},        // below 1
                      BadValue{"BRAID_SIZE", "-4"},       // negative
                      BadValue{"BRAID_SIZE", "four"},     // non-numeric
                      BadValue{"BRAID_SIZE", "4abc"},     // trailing junk
                      BadValue{"BRAID_SIZE", ""},         // empty
                      BadValue{"BRAID_SIZE", "1048577"},  // above 2^20
                      BadValue{"BRAID_SIZE", "99999999999999999999999"}),  // overflows
    [](const ::testing::TestParamInfo<BadValue> &info) {
      return std::string(info.param.variable) + "_" + std::to_string(info.index);
    });

TEST(EnvConfig, RankOutOfRangeReportsTheRange) {
  Failure f = parse_failure(job(4, 4));
  EXPECT_THAT(f.message(), AllOf(HasSubstr("BRAID_RANK=4"), HasSubstr("[0, 3]")));
}

TEST(EnvConfig, SizeIsValidatedBeforeRank) {
  // A bad size must be reported as a bad size, not as a rank out of a nonsensical range.
  Failure f = parse_failure({{"BRAID_RANK", "0"}, {"BRAID_SIZE", "0"}, {"BRAID_BOOTSTRAP", "h:1"}});
  EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(f.message(), HasSubstr("BRAID_SIZE=0"));
}

// --- BRAID_BOOTSTRAP host:port --------------------------------------------------------------

struct HostPort {
  const char *text;
  const char *host;
  uint16_t port;
};
std::ostream &operator<<(std::ostream &out, const HostPort &hp) {
  return out << "'" << hp.text << "'";
}

class EnvConfigGoodBootstrap : public ::testing::TestWithParam<HostPort> {};

TEST_P(EnvConfigGoodBootstrap, Parses) {
  const HostPort &hp = GetParam();
  Vars vars = job();
  vars["BRAID_BOOTSTRAP"] = hp.text;
  EnvConfig cfg = parse(vars);
  EXPECT_EQ(cfg.bootstrap_host, hp.host) << hp.text;
  EXPECT_EQ(cfg.bootstrap_port, hp.port) << hp.text;

  std::string host;
  uint16_t port = 0;
  parse_host_port(hp.text, "X", &host, &port);
  EXPECT_EQ(host, hp.host);
  EXPECT_EQ(port, hp.port);
}

INSTANTIATE_TEST_SUITE_P(Values, EnvConfigGoodBootstrap,
                         ::testing::Values(HostPort{"node01:29500", "node01", 29500},
                                           HostPort{"10.1.2.3:1", "10.1.2.3", 1},
                                           HostPort{"localhost:65535", "localhost", 65535},
                                           HostPort{"[::1]:5000", "::1", 5000},
                                           HostPort{"[fe80::1%eth0]:80", "fe80::1%eth0", 80},
                                           HostPort{"[2001:db8::7]:29500", "2001:db8::7", 29500}));

class EnvConfigBadBootstrap : public ::testing::TestWithParam<const char *> {};

TEST_P(EnvConfigBadBootstrap, NamesVariableAndValue) {
  const std::string text = GetParam();
  Vars vars = job();
  vars["BRAID_BOOTSTRAP"] = text;
  Failure f = parse_failure(vars);
  EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT) << text;
  EXPECT_THAT(f.message(), HasSubstr("BRAID_BOOTSTRAP"));
  // The offending text appears in the message; for a bad port, only the port part is quoted
  // (see BadPortMessageQuotesTheWholeValue).
  const size_t colon = text.rfind(':');
  const std::string port = colon == std::string::npos ? text : text.substr(colon + 1);
  EXPECT_TRUE(f.message().find(text) != std::string::npos ||
              f.message().find("='" + port + "'") != std::string::npos ||
              f.message().find("=" + port + " ") != std::string::npos)
      << f.message();
}

INSTANTIATE_TEST_SUITE_P(Values, EnvConfigBadBootstrap,
                         ::testing::Values("node01",        // no port
                                           "node01:",       // empty port
                                           ":5000",         // no host
                                           "node01:0",      // port 0
                                           "node01:65536",  // port too large
                                           "node01:-1",     // negative port
                                           "node01:http",   // junk port
                                           "node01:80x",    // trailing junk
                                           "node01:80:81",  // two colons
                                           "::1:5000",      // unbracketed IPv6
                                           "[::1]",         // bracketed, no port
                                           "[::1]:",        // bracketed, empty port
                                           "[::1]5000",     // missing colon after ]
                                           "[::1:5000",     // unterminated bracket
                                           "[]:5000",       // empty IPv6 host
                                           "[::1]:0",       // port 0
                                           "[::1]:65536",   // port too large
                                           ""));            // empty

TEST(EnvConfig, BootstrapPortRangeIsReported) {
  Vars vars = job();
  vars["BRAID_BOOTSTRAP"] = "node01:65536";
  Failure f = parse_failure(vars);
  EXPECT_THAT(f.message(),
              AllOf(HasSubstr("BRAID_BOOTSTRAP"), HasSubstr("65536"), HasSubstr("[1, 65535]")));
}

// Regression (was a bug): a bad port is reported as BRAID_BOOTSTRAP='http' (or ='', or =0),
// quoting only the port part as if it were the variable's whole value.
TEST(EnvConfig, BadPortMessageQuotesTheWholeValue) {
  for (const char *text : {"node01:http", "node01:", "node01:0", "[::1]:"}) {
    Vars vars = job();
    vars["BRAID_BOOTSTRAP"] = text;
    Failure f = parse_failure(vars);
    EXPECT_THAT(f.message(), HasSubstr(text));
  }
}

TEST(EnvConfig, HostPortParserLeavesOutputsAloneOnFailure) {
  std::string host = "unchanged";
  uint16_t port = 7;
  EXPECT_THROW(parse_host_port("node01:0", "X", &host, &port), Failure);
  EXPECT_EQ(host, "unchanged");
  EXPECT_EQ(port, 7);
}

// --- BRAID_TIMEOUT --------------------------------------------------------------------------

TEST(EnvConfig, TimeoutAcceptsPositiveSeconds) {
  for (auto [text, value] : std::map<std::string, double>{
           {"1", 1.0}, {"1.5", 1.5}, {"0.001", 0.001}, {"1e3", 1000.0}, {"86400", 86400.0}}) {
    Vars vars = job();
    vars["BRAID_TIMEOUT"] = text;
    EXPECT_DOUBLE_EQ(parse(vars).timeout_s, value) << text;
    EXPECT_DOUBLE_EQ(parse_seconds(text, "BRAID_TIMEOUT"), value) << text;
  }
}

TEST(EnvConfig, TimeoutRejectsNonPositiveAndJunk) {
  for (const char *text : {"0", "-1", "-0.5", "abc", "", "1.5s", "10 ", "inf", "nan", "1e999"}) {
    Vars vars = job();
    vars["BRAID_TIMEOUT"] = text;
    Failure f = parse_failure(vars);
    EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT) << text;
    EXPECT_THAT(f.message(), HasSubstr("BRAID_TIMEOUT='" + std::string(text) + "'"));
  }
}

TEST(EnvConfig, TimeoutIsValidatedEvenInAOneRankWorld) {
  Failure f = parse_failure({{"BRAID_TIMEOUT", "-1"}});
  EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(f.message(), HasSubstr("BRAID_TIMEOUT='-1'"));
}

// --- BRAID_TRANSPORT ------------------------------------------------------------------------

TEST(EnvConfig, TransportDefaultsToAuto) {
  EXPECT_EQ(parse(job()).transport, "auto");
  Vars vars = job();
  vars["BRAID_TRANSPORT"] = "";
  EXPECT_EQ(parse(vars).transport, "auto");
  vars["BRAID_TRANSPORT"] = "ucx";
  EXPECT_EQ(parse(vars).transport, "ucx");
  vars["BRAID_TRANSPORT"] = "my-plugin";
  EXPECT_EQ(parse(vars).transport, "my-plugin");
}

// --- BRAID_LOCAL_RANK / BRAID_LOCAL_SIZE ----------------------------------------------------

TEST(EnvConfig, LocalBoundsAccepted) {
  Vars vars = job(3, 4);
  vars["BRAID_LOCAL_SIZE"] = "4";  // == size
  vars["BRAID_LOCAL_RANK"] = "3";  // == local_size - 1
  EnvConfig cfg = parse(vars);
  EXPECT_EQ(cfg.local_size, 4);
  EXPECT_EQ(cfg.local_rank, 3);

  vars["BRAID_LOCAL_SIZE"] = "1";
  vars["BRAID_LOCAL_RANK"] = "0";
  cfg = parse(vars);
  EXPECT_EQ(cfg.local_size, 1);
  EXPECT_EQ(cfg.local_rank, 0);
}

TEST(EnvConfig, LocalRankWithoutLocalSizeIsBoundedBySize) {
  Vars vars = job(0, 4);
  vars["BRAID_LOCAL_RANK"] = "3";
  EnvConfig cfg = parse(vars);
  EXPECT_EQ(cfg.local_rank, 3);
  EXPECT_EQ(cfg.local_size, 4);

  vars["BRAID_LOCAL_RANK"] = "4";
  Failure f = parse_failure(vars);
  EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(f.message(), AllOf(HasSubstr("BRAID_LOCAL_RANK=4"), HasSubstr("[0, 3]")));
}

// A bad local value, and the companion local variable's value (null: leave it unset).
struct BadLocal {
  BadValue bad;
  const char *other;
};
std::ostream &operator<<(std::ostream &out, const BadLocal &b) {
  return out << b.bad << (b.other != nullptr ? " with companion " : "")
             << (b.other != nullptr ? b.other : "");
}

class EnvConfigBadLocal : public ::testing::TestWithParam<BadLocal> {};

TEST_P(EnvConfigBadLocal, NamesVariableAndValue) {
  const auto &[bad, other] = GetParam();
  Vars vars = job(1, 4);
  vars[bad.variable] = bad.value;
  const char *companion =
      std::string(bad.variable) == "BRAID_LOCAL_RANK" ? "BRAID_LOCAL_SIZE" : "BRAID_LOCAL_RANK";
  if (other != nullptr) vars[companion] = other;
  Failure f = parse_failure(vars);
  EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(f.message(), HasSubstr(bad.variable));
  EXPECT_THAT(f.message(), HasSubstr(bad.value));
}

INSTANTIATE_TEST_SUITE_P(Values, EnvConfigBadLocal,
                         ::testing::Values(BadLocal{{"BRAID_LOCAL_SIZE", "0"}, nullptr},
                                           BadLocal{{"BRAID_LOCAL_SIZE", "5"}, nullptr},  // > size
                                           BadLocal{{"BRAID_LOCAL_SIZE", "-1"}, nullptr},
                                           BadLocal{{"BRAID_LOCAL_SIZE", "two"}, "0"},
                                           BadLocal{{"BRAID_LOCAL_RANK", "2"},
                                                    "2"},  // == local size
                                           BadLocal{{"BRAID_LOCAL_RANK", "-1"}, "2"},
                                           BadLocal{{"BRAID_LOCAL_RANK", "1z"}, "2"},
                                           BadLocal{{"BRAID_LOCAL_RANK", ""}, "2"}),
                         [](const ::testing::TestParamInfo<BadLocal> &info) {
                           return std::string(info.param.bad.variable) + "_" +
                                  std::to_string(info.index);
                         });

// Regression (was a bug): BRAID_LOCAL_SIZE set without BRAID_LOCAL_RANK leaves local_rank at
// the global rank, which can be >= local_size (here 3 >= 2) and is handed to the transport as is.
TEST(EnvConfig, LocalSizeWithoutLocalRankKeepsLocalRankInRange) {
  Vars vars = job(3, 4);
  vars["BRAID_LOCAL_SIZE"] = "2";
  try {
    EnvConfig cfg = parse(vars);
    EXPECT_GE(cfg.local_rank, 0);
    EXPECT_LT(cfg.local_rank, cfg.local_size);
  } catch (const Failure &f) {
    EXPECT_THAT(f.message(), HasSubstr("BRAID_LOCAL_RANK"));
  }
}

// --- parse_integer directly ------------------------------------------------------------------

TEST(EnvConfig, ParseIntegerBounds) {
  EXPECT_EQ(parse_integer("0", "V", 0, 0), 0);
  EXPECT_EQ(parse_integer("-5", "V", -5, 5), -5);
  EXPECT_EQ(parse_integer("5", "V", -5, 5), 5);
  EXPECT_EQ(parse_integer("9223372036854775807", "V", 0, INT64_MAX), INT64_MAX);
  try {
    parse_integer("6", "MY_VAR", -5, 5);
    ADD_FAILURE() << "6 accepted";
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
    EXPECT_THAT(f.message(), AllOf(HasSubstr("MY_VAR=6"), HasSubstr("[-5, 5]")));
  }
  try {
    parse_integer("9223372036854775808", "MY_VAR", 0, INT64_MAX);
    ADD_FAILURE() << "2^63 accepted";
  } catch (const Failure &f) {
    EXPECT_THAT(f.message(), HasSubstr("MY_VAR='9223372036854775808'"));
  }
}

// --- BRAID_RENDEZVOUS (braidrun across hosts) -------------------------------------------------

TEST(EnvConfig, RendezvousListReplacesTheBootstrapAddress) {
  EnvConfig cfg = parse({{"BRAID_RANK", "1"},
                         {"BRAID_SIZE", "4"},
                         {"BRAID_RENDEZVOUS", "192.0.2.2:4000,10.200.9.1:4000,[fd00::2]:4000"}});
  EXPECT_EQ(cfg.bootstrap_host, "");
  ASSERT_EQ(cfg.rendezvous.size(), 3u);
  EXPECT_EQ(cfg.rendezvous[0].host, "192.0.2.2");
  EXPECT_EQ(cfg.rendezvous[1].host, "10.200.9.1");
  EXPECT_EQ(cfg.rendezvous[2].host, "fd00::2");
  EXPECT_EQ(cfg.rendezvous[2].port, 4000);
}

TEST(EnvConfig, RendezvousAndBootstrapTogetherAreRefused) {
  Vars vars = job();
  vars["BRAID_RENDEZVOUS"] = "h:1";
  Failure f = parse_failure(vars);
  EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
  EXPECT_THAT(f.message(), AllOf(HasSubstr("BRAID_BOOTSTRAP"), HasSubstr("BRAID_RENDEZVOUS")));
}

TEST(EnvConfig, MalformedRendezvousEntryIsNamed) {
  Failure f =
      parse_failure({{"BRAID_RANK", "0"}, {"BRAID_SIZE", "2"}, {"BRAID_RENDEZVOUS", "h:1,nohost"}});
  EXPECT_THAT(f.message(), AllOf(HasSubstr("BRAID_RENDEZVOUS"), HasSubstr("nohost")));
}

TEST(EnvConfig, RendezvousWithoutRankIsAnIncompleteJob) {
  Failure f = parse_failure({{"BRAID_SIZE", "2"}, {"BRAID_RENDEZVOUS", "h:1"}});
  EXPECT_THAT(f.message(),
              HasSubstr("BRAID_RANK is unset while BRAID_SIZE and BRAID_RENDEZVOUS are set"));
}

TEST(EnvSwitch, OnUnlessOffAndAnythingElseIsNamed) {
  EXPECT_TRUE(switch_on(lookup({}), "BRAID_X"));
  for (const char *on : {"", "on", "auto"})
    EXPECT_TRUE(switch_on(lookup({{"BRAID_X", on}}), "BRAID_X"));
  EXPECT_FALSE(switch_on(lookup({{"BRAID_X", "off"}}), "BRAID_X"));
  try {
    switch_on(lookup({{"BRAID_X", "maybe"}}), "BRAID_X");
    ADD_FAILURE() << "switch_on accepted 'maybe'";
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
    EXPECT_THAT(f.message(), HasSubstr("BRAID_X='maybe' is not on, off or auto"));
  }
}

}  // namespace
}  // namespace braid::detail
