// Names, sizes and validation of the public braid_dtype_t and braid_op_t values.
#pragma once

#include <braid/braid.h>

#include <cstddef>
#include <string_view>

namespace braid::coll {

// Bytes per element; 0 for a value that is not a braid_dtype_t.
size_t dtype_size(braid_dtype_t dt);
// "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32",
// "float64", "int16", "uint16"; "unknown" otherwise.
const char *dtype_name(braid_dtype_t dt);
// "sum", "prod", "min", "max", "avg", "band", "bor", "bxor", "land", "lor", "lxor"; "unknown"
// otherwise.
const char *op_name(braid_op_t op);

// Take int so that values arriving through the C API can be checked before they are trusted as
// enumerators.
bool dtype_valid(int dt);
bool op_valid(int op);
bool dtype_is_integer(braid_dtype_t dt);
// Null when `op` applies to `dt`, else why not ("bitwise op band needs an integer dtype, not
// float32"). Both must be valid.
const char *op_dtype_problem(braid_op_t op, braid_dtype_t dt);

// Parses the names returned by dtype_name plus common spellings ("float", "double", "half",
// "fp16", "bf16", "fp32", "f32", "i32", "int", "u8", ...). Lower-case only. On failure *out is
// left unchanged.
bool parse_dtype(std::string_view s, braid_dtype_t *out);
// Parses the names returned by op_name. Lower-case only. On failure *out is left unchanged.
bool parse_op(std::string_view s, braid_op_t *out);

}  // namespace braid::coll
