#include "kernels/dtype.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace braid::coll {
namespace {

struct DtypeInfo {
  braid_dtype_t dt;
  size_t size;
  const char *name;
};

constexpr DtypeInfo kDtypes[] = {
    {BRAID_INT8, 1, "int8"},       {BRAID_UINT8, 1, "uint8"},       {BRAID_INT32, 4, "int32"},
    {BRAID_UINT32, 4, "uint32"},   {BRAID_INT64, 8, "int64"},       {BRAID_UINT64, 8, "uint64"},
    {BRAID_FLOAT16, 2, "float16"}, {BRAID_BFLOAT16, 2, "bfloat16"}, {BRAID_FLOAT32, 4, "float32"},
    {BRAID_FLOAT64, 8, "float64"}, {BRAID_INT16, 2, "int16"},       {BRAID_UINT16, 2, "uint16"},
};

// Values that are not enumerators but still inside the enum's value range (0..15), so the casts
// are well defined.
constexpr int kBadDtypes[] = {12, 13, 15};

TEST(Dtype, SizesAndNames) {
  for (const DtypeInfo &d : kDtypes) {
    EXPECT_EQ(dtype_size(d.dt), d.size) << d.name;
    EXPECT_STREQ(dtype_name(d.dt), d.name);
    EXPECT_TRUE(dtype_valid(d.dt)) << d.name;
  }
  // Sizes agree with the C++ types the kernels store.
  EXPECT_EQ(dtype_size(BRAID_FLOAT32), sizeof(float));
  EXPECT_EQ(dtype_size(BRAID_FLOAT64), sizeof(double));
  EXPECT_EQ(dtype_size(BRAID_INT64), sizeof(int64_t));
}

TEST(Dtype, InvalidValues) {
  for (int bad : kBadDtypes) {
    EXPECT_EQ(dtype_size(static_cast<braid_dtype_t>(bad)), 0u) << bad;
    EXPECT_STREQ(dtype_name(static_cast<braid_dtype_t>(bad)), "unknown") << bad;
    EXPECT_FALSE(dtype_valid(bad)) << bad;
  }
  EXPECT_FALSE(dtype_valid(-1));
  EXPECT_FALSE(dtype_valid(1000));
  EXPECT_STREQ(op_name(static_cast<braid_op_t>(11)), "unknown");
  EXPECT_FALSE(op_valid(11));
  EXPECT_FALSE(op_valid(-1));
  EXPECT_FALSE(op_valid(1 << 20));
}

TEST(Dtype, ParseRoundTrips) {
  for (const DtypeInfo &d : kDtypes) {
    braid_dtype_t parsed = BRAID_FLOAT64 == d.dt ? BRAID_INT8 : BRAID_FLOAT64;
    ASSERT_TRUE(parse_dtype(dtype_name(d.dt), &parsed)) << d.name;
    EXPECT_EQ(parsed, d.dt) << d.name;
  }
}

TEST(Dtype, ParseAliases) {
  const std::pair<std::string_view, braid_dtype_t> aliases[] = {
      {"float", BRAID_FLOAT32},  {"fp32", BRAID_FLOAT32}, {"f32", BRAID_FLOAT32},
      {"double", BRAID_FLOAT64}, {"fp64", BRAID_FLOAT64}, {"f64", BRAID_FLOAT64},
      {"half", BRAID_FLOAT16},   {"fp16", BRAID_FLOAT16}, {"f16", BRAID_FLOAT16},
      {"bf16", BRAID_BFLOAT16},  {"int", BRAID_INT32},    {"i32", BRAID_INT32},
      {"u32", BRAID_UINT32},     {"i64", BRAID_INT64},    {"u64", BRAID_UINT64},
      {"i8", BRAID_INT8},        {"u8", BRAID_UINT8},
  };
  for (const auto &[text, dt] : aliases) {
    braid_dtype_t parsed = dt == BRAID_INT8 ? BRAID_UINT8 : BRAID_INT8;
    ASSERT_TRUE(parse_dtype(text, &parsed)) << text;
    EXPECT_EQ(parsed, dt) << text;
  }
}

TEST(Dtype, ParseRejectsUnknownAndLeavesOutputAlone) {
  for (std::string_view bad :
       {"", "Float32", "FLOAT", "float128", "int128", "float32 ", " int8", "unknown", "sum"}) {
    braid_dtype_t parsed = BRAID_UINT64;
    EXPECT_FALSE(parse_dtype(bad, &parsed)) << '"' << bad << '"';
    EXPECT_EQ(parsed, BRAID_UINT64);
  }
  // A string_view that is not NUL-terminated: only its own characters count.
  const std::string text = "float32x";
  braid_dtype_t parsed = BRAID_INT8;
  EXPECT_TRUE(parse_dtype(std::string_view(text).substr(0, 7), &parsed));
  EXPECT_EQ(parsed, BRAID_FLOAT32);
}

TEST(Op, NamesAndParse) {
  const std::pair<braid_op_t, const char *> ops[] = {
      {BRAID_SUM, "sum"}, {BRAID_PROD, "prod"}, {BRAID_MIN, "min"}, {BRAID_MAX, "max"}};
  for (const auto &[op, name] : ops) {
    EXPECT_STREQ(op_name(op), name);
    EXPECT_TRUE(op_valid(op)) << name;
    braid_op_t parsed = op == BRAID_SUM ? BRAID_MAX : BRAID_SUM;
    ASSERT_TRUE(parse_op(name, &parsed)) << name;
    EXPECT_EQ(parsed, op) << name;
  }
  for (std::string_view bad : {"", "SUM", "add", "product", "minimum", "float32"}) {
    braid_op_t parsed = BRAID_PROD;
    EXPECT_FALSE(parse_op(bad, &parsed)) << '"' << bad << '"';
    EXPECT_EQ(parsed, BRAID_PROD);
  }
}

TEST(Dtype, OpNamesAndWhichOpsApplyToWhichDtypes) {
  const std::pair<braid_op_t, const char *> ops[] = {
      {BRAID_SUM, "sum"},   {BRAID_PROD, "prod"}, {BRAID_MIN, "min"},  {BRAID_MAX, "max"},
      {BRAID_AVG, "avg"},   {BRAID_BAND, "band"}, {BRAID_BOR, "bor"},  {BRAID_BXOR, "bxor"},
      {BRAID_LAND, "land"}, {BRAID_LOR, "lor"},   {BRAID_LXOR, "lxor"}};
  for (const auto &[op, name] : ops) {
    EXPECT_TRUE(op_valid(op)) << name;
    EXPECT_STREQ(op_name(op), name);
    braid_op_t parsed = BRAID_SUM;
    EXPECT_TRUE(parse_op(name, &parsed));
    EXPECT_EQ(parsed, op);
    const bool integer_only = op >= BRAID_BAND;
    for (const DtypeInfo &d : kDtypes) {
      const bool integer = dtype_is_integer(d.dt);
      EXPECT_EQ(integer, d.name[0] == 'i' || d.name[0] == 'u') << d.name;
      const char *why = op_dtype_problem(op, d.dt);
      if (integer_only && !integer) {
        ASSERT_NE(why, nullptr) << name << " on " << d.name;
        EXPECT_NE(std::string(why).find("integer dtype"), std::string::npos);
      } else {
        EXPECT_EQ(why, nullptr) << name << " on " << d.name;
      }
    }
  }
}

}  // namespace
}  // namespace braid::coll
