// The vocabulary of a benchmark run: which collective, element type, reduction and timing mode.
// Independent of braid and of MPI so both benchmark programs (and the tests) share it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace braid_bench {

enum class Collective {
  allreduce,
  broadcast,
  barrier,
  reduce,
  allgather,
  allgatherv,
  reduce_scatter,
  alltoall,
  alltoallv,
  gather,
  scatter,
};
enum class Dtype {
  int8,
  uint8,
  int32,
  uint32,
  int64,
  uint64,
  float16,
  bfloat16,
  float32,
  float64,
  int16,
  uint16
};
enum class Op { sum, prod, min, max };
enum class Mode { osu, pipelined };

const char *name(Collective c);
const char *name(Dtype d);
const char *name(Op o);
const char *name(Mode m);

std::optional<Collective> parse_collective(std::string_view s);
std::optional<Dtype> parse_dtype(std::string_view s);
std::optional<Op> parse_op(std::string_view s);
std::optional<Mode> parse_mode(std::string_view s);

// "int8 uint8 ... float64": the accepted names, for help and error messages.
std::string dtype_names();
std::string op_names();
// "allreduce broadcast ...": the collectives, for help and error messages.
std::string collective_names();
// Whether a collective reduces (takes --op) and has a root (takes --root).
bool reduces(Collective c);
bool rooted(Collective c);

size_t dtype_size(Dtype d);

}  // namespace braid_bench
