// The verbs plugin's environment variables.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "options.hpp"

namespace braid::verbs {
namespace {

std::map<std::string, std::string> g_env;
const char *lookup(const char *name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

TEST(VerbsOptions, DefaultsWithoutEnvironment) {
  g_env.clear();
  Options o;
  std::string error;
  ASSERT_TRUE(parse_options(lookup, &o, &error)) << error;
  EXPECT_TRUE(o.device.empty());
  EXPECT_EQ(o.port, 0);
  EXPECT_FALSE(o.queues.empty());
  EXPECT_EQ(o.rnr_retry, 7);
  EXPECT_EQ(o.eager_limit, 0u);
  EXPECT_TRUE(o.rcache);
  EXPECT_FALSE(o.direct);
  EXPECT_TRUE(o.headerless);
}

TEST(VerbsOptions, ReadsEveryVariable) {
  g_env = {{"BRAID_VERBS_DEVICE", "rxe0:1"},    {"BRAID_VERBS_RECV_QUEUES", "S,256,512"},
           {"BRAID_VERBS_EAGER_LIMIT", "1024"}, {"BRAID_VERBS_RNR_RETRY", "0"},
           {"BRAID_VERBS_RCACHE", "off"},       {"BRAID_VERBS_DIRECT", "on"},
           {"BRAID_VERBS_HEADERLESS", "off"}};
  Options o;
  std::string error;
  ASSERT_TRUE(parse_options(lookup, &o, &error)) << error;
  EXPECT_EQ(o.device, "rxe0");
  EXPECT_EQ(o.port, 1);
  ASSERT_EQ(o.queues.size(), 1u);
  EXPECT_EQ(o.eager_limit, 1024u);
  EXPECT_EQ(o.rnr_retry, 0);
  EXPECT_FALSE(o.rcache);
  EXPECT_TRUE(o.direct);
  EXPECT_FALSE(o.headerless);
  g_env = {{"BRAID_VERBS_DEVICE", "mlx5_0"}};
  ASSERT_TRUE(parse_options(lookup, &o, &error)) << error;
  EXPECT_EQ(o.device, "mlx5_0");
  EXPECT_EQ(o.port, 0);
}

TEST(VerbsOptions, BadValuesNameTheVariable) {
  for (auto [name, value] :
       std::map<std::string, std::string>{{"BRAID_VERBS_DEVICE", "rxe0:0"},
                                          {"BRAID_VERBS_DEVICE", ":1"},
                                          {"BRAID_VERBS_EAGER_LIMIT", "lots"},
                                          {"BRAID_VERBS_EAGER_LIMIT", "99999999999"},
                                          {"BRAID_VERBS_RNR_RETRY", "8"},
                                          {"BRAID_VERBS_RCACHE", "yes"},
                                          {"BRAID_VERBS_DIRECT", "1"},
                                          {"BRAID_VERBS_HEADERLESS", "no"},
                                          {"BRAID_VERBS_RECV_QUEUES", "Q,1,1"}}) {
    g_env = {{name, value}};
    Options o;
    std::string error;
    EXPECT_FALSE(parse_options(lookup, &o, &error)) << name << "=" << value;
    EXPECT_NE(error.find(name), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace braid::verbs
