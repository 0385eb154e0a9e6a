#include "types.hpp"

#include <array>
#include <utility>

namespace braid_bench {
namespace {

constexpr std::array<std::pair<Dtype, const char *>, 12> kDtypes = {{
    {Dtype::int8, "int8"},
    {Dtype::uint8, "uint8"},
    {Dtype::int32, "int32"},
    {Dtype::uint32, "uint32"},
    {Dtype::int64, "int64"},
    {Dtype::uint64, "uint64"},
    {Dtype::float16, "float16"},
    {Dtype::bfloat16, "bfloat16"},
    {Dtype::float32, "float32"},
    {Dtype::float64, "float64"},
    {Dtype::int16, "int16"},
    {Dtype::uint16, "uint16"},
}};
constexpr std::array<std::pair<Op, const char *>, 4> kOps = {{
    {Op::sum, "sum"},
    {Op::prod, "prod"},
    {Op::min, "min"},
    {Op::max, "max"},
}};
constexpr std::array<std::pair<Collective, const char *>, 11> kCollectives = {{
    {Collective::allreduce, "allreduce"},
    {Collective::broadcast, "broadcast"},
    {Collective::barrier, "barrier"},
    {Collective::reduce, "reduce"},
    {Collective::allgather, "allgather"},
    {Collective::allgatherv, "allgatherv"},
    {Collective::reduce_scatter, "reduce_scatter"},
    {Collective::alltoall, "alltoall"},
    {Collective::alltoallv, "alltoallv"},
    {Collective::gather, "gather"},
    {Collective::scatter, "scatter"},
}};
constexpr std::array<std::pair<Mode, const char *>, 2> kModes = {{
    {Mode::osu, "osu"},
    {Mode::pipelined, "pipelined"},
}};

template <typename Table, typename E>
const char *lookup_name(const Table &table, E e) {
  for (const auto &[value, text] : table)
    if (value == e) return text;
  return "?";
}

template <typename E, typename Table>
std::optional<E> lookup_value(const Table &table, std::string_view s) {
  for (const auto &[value, text] : table)
    if (s == text) return value;
  return std::nullopt;
}

template <typename Table>
std::string joined(const Table &table) {
  std::string out;
  for (const auto &entry : table) {
    if (!out.empty()) out += ' ';
    out += entry.second;
  }
  return out;
}

}  // namespace

const char *name(Collective c) {
  return lookup_name(kCollectives, c);
}
const char *name(Dtype d) {
  return lookup_name(kDtypes, d);
}
const char *name(Op o) {
  return lookup_name(kOps, o);
}
const char *name(Mode m) {
  return lookup_name(kModes, m);
}

std::optional<Collective> parse_collective(std::string_view s) {
  return lookup_value<Collective>(kCollectives, s);
}
std::optional<Dtype> parse_dtype(std::string_view s) {
  return lookup_value<Dtype>(kDtypes, s);
}
std::optional<Op> parse_op(std::string_view s) {
  return lookup_value<Op>(kOps, s);
}
std::optional<Mode> parse_mode(std::string_view s) {
  return lookup_value<Mode>(kModes, s);
}

std::string dtype_names() {
  return joined(kDtypes);
}
std::string op_names() {
  return joined(kOps);
}

std::string collective_names() {
  return joined(kCollectives);
}

bool reduces(Collective c) {
  return c == Collective::allreduce || c == Collective::reduce || c == Collective::reduce_scatter;
}

bool rooted(Collective c) {
  return c == Collective::broadcast || c == Collective::reduce || c == Collective::gather ||
         c == Collective::scatter;
}

size_t dtype_size(Dtype d) {
  switch (d) {
    case Dtype::int8:
    case Dtype::uint8:
      return 1;
    case Dtype::int16:
    case Dtype::uint16:
      return 2;
    case Dtype::float16:
    case Dtype::bfloat16:
      return 2;
    case Dtype::int32:
    case Dtype::uint32:
    case Dtype::float32:
      return 4;
    case Dtype::int64:
    case Dtype::uint64:
    case Dtype::float64:
      return 8;
  }
  return 1;
}

}  // namespace braid_bench
