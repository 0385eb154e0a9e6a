#include "kernels/dtype.hpp"

#include <string_view>

namespace braid::coll {
namespace {

struct DtypeName {
  const char *name;  // string literal: returned by dtype_name()
  braid_dtype_t dtype;
};

// Canonical names first: dtype_name() returns the first entry of each dtype.
constexpr DtypeName kDtypeNames[] = {
    {"int8", BRAID_INT8},
    {"uint8", BRAID_UINT8},
    {"int32", BRAID_INT32},
    {"uint32", BRAID_UINT32},
    {"int64", BRAID_INT64},
    {"uint64", BRAID_UINT64},
    {"float16", BRAID_FLOAT16},
    {"bfloat16", BRAID_BFLOAT16},
    {"float32", BRAID_FLOAT32},
    {"float64", BRAID_FLOAT64},
    {"int16", BRAID_INT16},
    {"uint16", BRAID_UINT16},
    // Aliases, for command lines and environment variables of tools and benchmarks.
    {"i8", BRAID_INT8},
    {"i16", BRAID_INT16},
    {"u16", BRAID_UINT16},
    {"short", BRAID_INT16},
    {"u8", BRAID_UINT8},
    {"int", BRAID_INT32},
    {"i32", BRAID_INT32},
    {"u32", BRAID_UINT32},
    {"uint", BRAID_UINT32},
    {"i64", BRAID_INT64},
    {"u64", BRAID_UINT64},
    {"half", BRAID_FLOAT16},
    {"fp16", BRAID_FLOAT16},
    {"f16", BRAID_FLOAT16},
    {"bf16", BRAID_BFLOAT16},
    {"float", BRAID_FLOAT32},
    {"fp32", BRAID_FLOAT32},
    {"f32", BRAID_FLOAT32},
    {"double", BRAID_FLOAT64},
    {"fp64", BRAID_FLOAT64},
    {"f64", BRAID_FLOAT64},
};

struct OpName {
  const char *name;
  braid_op_t op;
};

constexpr OpName kOpNames[] = {
    {"sum", BRAID_SUM},   {"prod", BRAID_PROD}, {"min", BRAID_MIN},   {"max", BRAID_MAX},
    {"avg", BRAID_AVG},   {"band", BRAID_BAND}, {"bor", BRAID_BOR},   {"bxor", BRAID_BXOR},
    {"land", BRAID_LAND}, {"lor", BRAID_LOR},   {"lxor", BRAID_LXOR},
};

}  // namespace

bool dtype_valid(int dt) {
  return dt >= BRAID_INT8 && dt <= BRAID_UINT16;
}

bool op_valid(int op) {
  return op >= BRAID_SUM && op <= BRAID_LXOR;
}

bool dtype_is_integer(braid_dtype_t dt) {
  return dt != BRAID_FLOAT16 && dt != BRAID_BFLOAT16 && dt != BRAID_FLOAT32 &&
         dt != BRAID_FLOAT64 && dtype_valid(dt);
}

const char *op_dtype_problem(braid_op_t op, braid_dtype_t dt) {
  if (dtype_is_integer(dt)) return nullptr;
  switch (op) {
    case BRAID_BAND:
    case BRAID_BOR:
    case BRAID_BXOR:
      return "a bitwise op needs an integer dtype";
    case BRAID_LAND:
    case BRAID_LOR:
    case BRAID_LXOR:
      return "a logical op needs an integer dtype";
    default:
      return nullptr;
  }
}

size_t dtype_size(braid_dtype_t dt) {
  switch (dt) {
    case BRAID_INT8:
    case BRAID_UINT8:
      return 1;
    case BRAID_INT16:
    case BRAID_UINT16:
    case BRAID_FLOAT16:
    case BRAID_BFLOAT16:
      return 2;
    case BRAID_INT32:
    case BRAID_UINT32:
    case BRAID_FLOAT32:
      return 4;
    case BRAID_INT64:
    case BRAID_UINT64:
    case BRAID_FLOAT64:
      return 8;
    default:  // the range enumerators and invalid values
      break;
  }
  return 0;
}

const char *dtype_name(braid_dtype_t dt) {
  for (const DtypeName &entry : kDtypeNames)
    if (entry.dtype == dt) return entry.name;
  return "unknown";
}

const char *op_name(braid_op_t op) {
  for (const OpName &entry : kOpNames)
    if (entry.op == op) return entry.name;
  return "unknown";
}

bool parse_dtype(std::string_view s, braid_dtype_t *out) {
  for (const DtypeName &entry : kDtypeNames) {
    if (entry.name == s) {
      *out = entry.dtype;
      return true;
    }
  }
  return false;
}

bool parse_op(std::string_view s, braid_op_t *out) {
  for (const OpName &entry : kOpNames) {
    if (entry.name == s) {
      *out = entry.op;
      return true;
    }
  }
  return false;
}

}  // namespace braid::coll
