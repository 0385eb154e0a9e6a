// braid C++ API: RAII over the C API, typed collectives over contiguous ranges (std::vector,
// std::array, std::span, ...), and braid::Error exceptions carrying the result code and the
// detailed message. Header-only; link braid::braid.
//
//   braid::Session session;                  // braid_init ... braid_finalize
//   braid::Comm world = session.world();
//   std::vector<float> v(1024, 1.0f);
//   world.allreduce(v, braid::Op::sum);      // in place
//   world.broadcast(v, /*root=*/0);
#pragma once

#include <braid/braid.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <ranges>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace braid {

class Error : public std::runtime_error {
 public:
  Error(braid_result_t code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  braid_result_t code() const noexcept { return code_; }

 private:
  braid_result_t code_;
};

enum class Op {
  sum = BRAID_SUM,
  prod = BRAID_PROD,
  min = BRAID_MIN,
  max = BRAID_MAX,
  avg = BRAID_AVG,    // sum / size; integers truncated toward zero
  band = BRAID_BAND,  // bitwise and logical ops: integer element types only
  bor = BRAID_BOR,
  bxor = BRAID_BXOR,
  land = BRAID_LAND,
  lor = BRAID_LOR,
  lxor = BRAID_LXOR,
};

// 16-bit floating-point element types, stored as their bit patterns.
struct float16 {
  std::uint16_t bits;
};
struct bfloat16 {
  std::uint16_t bits;
};

template <typename T>
struct dtype_of;
template <>
struct dtype_of<std::int8_t> {
  static constexpr braid_dtype_t value = BRAID_INT8;
};
template <>
struct dtype_of<std::uint8_t> {
  static constexpr braid_dtype_t value = BRAID_UINT8;
};
template <>
struct dtype_of<std::int16_t> {
  static constexpr braid_dtype_t value = BRAID_INT16;
};
template <>
struct dtype_of<std::uint16_t> {
  static constexpr braid_dtype_t value = BRAID_UINT16;
};
template <>
struct dtype_of<std::int32_t> {
  static constexpr braid_dtype_t value = BRAID_INT32;
};
template <>
struct dtype_of<std::uint32_t> {
  static constexpr braid_dtype_t value = BRAID_UINT32;
};
template <>
struct dtype_of<std::int64_t> {
  static constexpr braid_dtype_t value = BRAID_INT64;
};
template <>
struct dtype_of<std::uint64_t> {
  static constexpr braid_dtype_t value = BRAID_UINT64;
};
template <>
struct dtype_of<float16> {
  static constexpr braid_dtype_t value = BRAID_FLOAT16;
};
template <>
struct dtype_of<bfloat16> {
  static constexpr braid_dtype_t value = BRAID_BFLOAT16;
};
template <>
struct dtype_of<float> {
  static constexpr braid_dtype_t value = BRAID_FLOAT32;
};
template <>
struct dtype_of<double> {
  static constexpr braid_dtype_t value = BRAID_FLOAT64;
};

// An element type braid can reduce and broadcast.
template <typename T>
concept Element = requires {
  dtype_of<std::remove_cv_t<T>>::value;
};

// A contiguous range of Elements: std::vector<float>, std::span<int32_t>, std::array, ...
template <typename R>
concept Buffer = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    Element<std::ranges::range_value_t<R>>;

namespace detail {
inline void check(braid_result_t r) {
  if (r != BRAID_SUCCESS) throw Error(r, braid_last_error());
}
}  // namespace detail

// A non-blocking collective in flight. Waits in its destructor if never waited for, so the
// buffers it uses are never released under it (errors there are swallowed: call wait()).
class Request {
 public:
  Request() = default;
  explicit Request(braid_request_t r) : req_(r) {}
  Request(Request &&o) noexcept : req_(std::exchange(o.req_, nullptr)) {}
  Request &operator=(Request &&o) noexcept {
    if (this != &o) {
      reset();
      req_ = std::exchange(o.req_, nullptr);
    }
    return *this;
  }
  Request(const Request &) = delete;
  Request &operator=(const Request &) = delete;
  ~Request() { reset(); }

  // Blocks until done; throws braid::Error if the collective failed.
  void wait() {
    if (req_ != nullptr) detail::check(braid_wait(&req_));
  }
  // Progresses; true once done (throws braid::Error if it failed).
  bool test() {
    if (req_ == nullptr) return true;
    int done = 0;
    detail::check(braid_test(&req_, &done));
    return done != 0;
  }
  bool pending() const { return req_ != nullptr; }

 private:
  void reset() noexcept {
    if (req_ != nullptr) (void)braid_wait(&req_);
  }
  braid_request_t req_ = nullptr;
};

// A communicator. The world's belongs to the Session; those made by split() and dup() are
// freed (braid_comm_free) when the last copy of them goes, or by free(). Copies share it.
class Comm {
 public:
  // Wraps a handle without owning it.
  explicit Comm(braid_comm_t c) : c_(c) {}

  // Collective over this communicator: the ranks with the same color form one communicator,
  // ordered by (key, rank here). std::nullopt for color BRAID_UNDEFINED.
  std::optional<Comm> split(int color, int key) const {
    braid_comm_t out = nullptr;
    detail::check(braid_comm_split(c_, color, key, &out));
    if (out == nullptr) return std::nullopt;
    return Comm(out, owned_tag{});
  }
  std::optional<Comm> split(int color) const { return split(color, rank()); }
  // Joins the group of `nranks` processes that share `id` (braid::unique_id() in one of them,
  // passed to the others by the application's own means) as `rank`. The group is left when the
  // last copy goes (or by free()).
  static Comm from_unique_id(const braid_unique_id_t &id, int nranks, int rank) {
    braid_comm_t out = nullptr;
    detail::check(braid_comm_init_rank(&out, nranks, id, rank));
    return Comm(out, owned_tag{});
  }
  Comm dup() const {
    braid_comm_t out = nullptr;
    detail::check(braid_comm_dup(c_, &out));
    return Comm(out, owned_tag{});
  }
  // Frees an owned communicator now (throws braid::Error, e.g. with requests outstanding);
  // this and every copy are then invalid. A no-op for one not owned.
  void free() {
    if (!owner_) return;
    braid_comm_t c = c_;
    detail::check(braid_comm_free(&c));
    *owner_ = nullptr;
    owner_.reset();
  }
  int rank() const { return braid_comm_rank(c_); }
  int size() const { return braid_comm_size(c_); }
  std::string transport() const {
    const char *t = braid_comm_transport(c_);
    return t ? t : "";
  }
  braid_comm_t native() const { return c_; }
  // NUMA node this rank is bound to, -1 if unbound or unknown.
  int numa_node() const { return braid_comm_numa_node(c_); }

  // The transport's counters and braid's own, by name (see braid_comm_counters).
  std::map<std::string, uint64_t> counters() const {
    size_t n = 0;
    detail::check(braid_comm_counters(c_, nullptr, &n));
    std::vector<braid_counter_t> raw(n);
    detail::check(braid_comm_counters(c_, raw.data(), &n));
    std::map<std::string, uint64_t> out;
    for (size_t i = 0; i < n && i < raw.size(); ++i) out[raw[i].name] = raw[i].value;
    return out;
  }

  // Out of place: `out` must have as many elements as `in`.
  template <Buffer In, Buffer Out>
  void allreduce(const In &in, Out &&out, Op op = Op::sum) const {
    using T = std::ranges::range_value_t<In>;
    static_assert(std::is_same_v<T, std::ranges::range_value_t<Out>>, "element types differ");
    same_size(std::ranges::size(in), std::ranges::size(out));
    detail::check(braid_allreduce(std::ranges::data(in), std::ranges::data(out),
                                  std::ranges::size(in), dtype_of<T>::value,
                                  static_cast<braid_op_t>(op), c_));
  }
  // In place.
  template <Buffer R>
  void allreduce(R &&inout, Op op = Op::sum) const {
    using T = std::ranges::range_value_t<R>;
    detail::check(braid_allreduce(std::ranges::data(inout), std::ranges::data(inout),
                                  std::ranges::size(inout), dtype_of<T>::value,
                                  static_cast<braid_op_t>(op), c_));
  }
  template <Buffer R>
  void broadcast(R &&buf, int root) const {
    using T = std::ranges::range_value_t<R>;
    detail::check(braid_broadcast(std::ranges::data(buf), std::ranges::size(buf),
                                  dtype_of<T>::value, root, c_));
  }
  void barrier() const { detail::check(braid_barrier(c_)); }

  template <Buffer In, Buffer Out>
  [[nodiscard]] Request iallreduce(const In &in, Out &&out, Op op = Op::sum) const {
    using T = std::ranges::range_value_t<In>;
    static_assert(std::is_same_v<T, std::ranges::range_value_t<Out>>, "element types differ");
    same_size(std::ranges::size(in), std::ranges::size(out));
    braid_request_t r = nullptr;
    detail::check(braid_iallreduce(std::ranges::data(in), std::ranges::data(out),
                                   std::ranges::size(in), dtype_of<T>::value,
                                   static_cast<braid_op_t>(op), c_, &r));
    return Request(r);
  }
  template <Buffer R>
  [[nodiscard]] Request iallreduce(R &&inout, Op op = Op::sum) const {
    using T = std::ranges::range_value_t<R>;
    braid_request_t r = nullptr;
    detail::check(braid_iallreduce(std::ranges::data(inout), std::ranges::data(inout),
                                   std::ranges::size(inout), dtype_of<T>::value,
                                   static_cast<braid_op_t>(op), c_, &r));
    return Request(r);
  }
  template <Buffer R>
  [[nodiscard]] Request ibroadcast(R &&buf, int root) const {
    using T = std::ranges::range_value_t<R>;
    braid_request_t r = nullptr;
    detail::check(braid_ibroadcast(std::ranges::data(buf), std::ranges::size(buf),
                                   dtype_of<T>::value, root, c_, &r));
    return Request(r);
  }

  // reduce: the result in `out` at the root only (out is ignored elsewhere and may be empty).
  template <Buffer In, Buffer Out>
  void reduce(const In &in, Out &&out, Op op, int root) const {
    using T = elem<In>;
    static_assert(std::is_same_v<T, elem<Out>>, "element types differ");
    if (rank() == root) same_size(std::ranges::size(in), std::ranges::size(out));
    detail::check(braid_reduce(std::ranges::data(in), std::ranges::data(out), std::ranges::size(in),
                               dtype_of<T>::value, static_cast<braid_op_t>(op), root, c_));
  }
  // In place at the root.
  template <Buffer R>
  void reduce(R &&inout, Op op, int root) const {
    detail::check(braid_reduce(std::ranges::data(inout), std::ranges::data(inout),
                               std::ranges::size(inout), dtype_of<elem<R>>::value,
                               static_cast<braid_op_t>(op), root, c_));
  }
  // allgather: `out` holds size() blocks of in.size() elements, in rank order.
  template <Buffer In, Buffer Out>
  void allgather(const In &in, Out &&out) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    blocks_of(std::ranges::size(in), std::ranges::size(out), "allgather");
    detail::check(braid_allgather(std::ranges::data(in), std::ranges::data(out),
                                  std::ranges::size(in), dtype_of<elem<In>>::value, c_));
  }
  // allgatherv: rank r's block (counts[r] elements) lands at out + displs[r].
  template <Buffer In, Buffer Out>
  void allgatherv(const In &in, Out &&out, const std::vector<std::size_t> &counts,
                  const std::vector<std::size_t> &displs) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    per_rank(counts.size(), "allgatherv counts");
    per_rank(displs.size(), "allgatherv displs");
    fits(counts, displs, std::ranges::size(out), "allgatherv");
    detail::check(braid_allgatherv(std::ranges::data(in), std::ranges::size(in),
                                   std::ranges::data(out), counts.data(), displs.data(),
                                   dtype_of<elem<In>>::value, c_));
  }
  // reduce_scatter: `in` holds size() blocks of out.size() elements; out gets this rank's
  // block of the reduction.
  template <Buffer In, Buffer Out>
  void reduce_scatter(const In &in, Out &&out, Op op = Op::sum) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    blocks_of(std::ranges::size(out), std::ranges::size(in), "reduce_scatter");
    detail::check(braid_reduce_scatter(std::ranges::data(in), std::ranges::data(out),
                                       std::ranges::size(out), dtype_of<elem<In>>::value,
                                       static_cast<braid_op_t>(op), c_));
  }
  // alltoall: in and out hold size() blocks each; block j of `in` goes to rank j.
  template <Buffer In, Buffer Out>
  void alltoall(const In &in, Out &&out) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    same_size(std::ranges::size(in), std::ranges::size(out));
    const std::size_t block = block_of(std::ranges::size(in), "alltoall");
    detail::check(braid_alltoall(std::ranges::data(in), std::ranges::data(out), block,
                                 dtype_of<elem<In>>::value, c_));
  }
  template <Buffer R>
  void alltoall(R &&inout) const {
    const std::size_t block = block_of(std::ranges::size(inout), "alltoall");
    detail::check(braid_alltoall(std::ranges::data(inout), std::ranges::data(inout), block,
                                 dtype_of<elem<R>>::value, c_));
  }
  template <Buffer In, Buffer Out>
  void alltoallv(const In &in, const std::vector<std::size_t> &sendcounts,
                 const std::vector<std::size_t> &sdispls, Out &&out,
                 const std::vector<std::size_t> &recvcounts,
                 const std::vector<std::size_t> &rdispls) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    for (std::size_t n : {sendcounts.size(), sdispls.size(), recvcounts.size(), rdispls.size()})
      per_rank(n, "alltoallv counts and displacements");
    fits(sendcounts, sdispls, std::ranges::size(in), "alltoallv send");
    fits(recvcounts, rdispls, std::ranges::size(out), "alltoallv receive");
    detail::check(braid_alltoallv(std::ranges::data(in), sendcounts.data(), sdispls.data(),
                                  std::ranges::data(out), recvcounts.data(), rdispls.data(),
                                  dtype_of<elem<In>>::value, c_));
  }
  // gather: at the root, out holds size() blocks of in.size() elements (ignored elsewhere).
  template <Buffer In, Buffer Out>
  void gather(const In &in, Out &&out, int root) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    if (rank() == root) blocks_of(std::ranges::size(in), std::ranges::size(out), "gather");
    detail::check(braid_gather(std::ranges::data(in), std::ranges::data(out), std::ranges::size(in),
                               dtype_of<elem<In>>::value, root, c_));
  }
  // scatter: at the root, in holds size() blocks of out.size() elements (ignored elsewhere).
  template <Buffer In, Buffer Out>
  void scatter(const In &in, Out &&out, int root) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    if (rank() == root) blocks_of(std::ranges::size(out), std::ranges::size(in), "scatter");
    detail::check(braid_scatter(std::ranges::data(in), std::ranges::data(out),
                                std::ranges::size(out), dtype_of<elem<In>>::value, root, c_));
  }
  [[nodiscard]] Request ibarrier() const {
    braid_request_t r = nullptr;
    detail::check(braid_ibarrier(c_, &r));
    return Request(r);
  }
  template <Buffer In, Buffer Out>
  [[nodiscard]] Request iallgather(const In &in, Out &&out) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    blocks_of(std::ranges::size(in), std::ranges::size(out), "iallgather");
    braid_request_t r = nullptr;
    detail::check(braid_iallgather(std::ranges::data(in), std::ranges::data(out),
                                   std::ranges::size(in), dtype_of<elem<In>>::value, c_, &r));
    return Request(r);
  }
  template <Buffer In, Buffer Out>
  [[nodiscard]] Request ireduce_scatter(const In &in, Out &&out, Op op = Op::sum) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    blocks_of(std::ranges::size(out), std::ranges::size(in), "ireduce_scatter");
    braid_request_t r = nullptr;
    detail::check(braid_ireduce_scatter(std::ranges::data(in), std::ranges::data(out),
                                        std::ranges::size(out), dtype_of<elem<In>>::value,
                                        static_cast<braid_op_t>(op), c_, &r));
    return Request(r);
  }
  // The non-blocking forms below take what their blocking twins take. Until the request
  // completes, the buffers and the count and displacement vectors belong to braid: they must
  // outlive it, unchanged.
  template <Buffer In, Buffer Out>
  [[nodiscard]] Request ireduce(const In &in, Out &&out, Op op, int root) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    if (rank() == root) same_size(std::ranges::size(in), std::ranges::size(out));
    braid_request_t r = nullptr;
    detail::check(braid_ireduce(std::ranges::data(in), std::ranges::data(out),
                                std::ranges::size(in), dtype_of<elem<In>>::value,
                                static_cast<braid_op_t>(op), root, c_, &r));
    return Request(r);
  }
  // In place at the root, as reduce(inout, op, root).
  template <Buffer R>
  [[nodiscard]] Request ireduce(R &&inout, Op op, int root) const {
    braid_request_t r = nullptr;
    detail::check(braid_ireduce(std::ranges::data(inout), std::ranges::data(inout),
                                std::ranges::size(inout), dtype_of<elem<R>>::value,
                                static_cast<braid_op_t>(op), root, c_, &r));
    return Request(r);
  }
  template <Buffer In, Buffer Out>
  [[nodiscard]] Request iallgatherv(const In &in, Out &&out, const std::vector<std::size_t> &counts,
                                    const std::vector<std::size_t> &displs) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    per_rank(counts.size(), "iallgatherv counts");
    per_rank(displs.size(), "iallgatherv displs");
    fits(counts, displs, std::ranges::size(out), "iallgatherv");
    braid_request_t r = nullptr;
    detail::check(braid_iallgatherv(std::ranges::data(in), std::ranges::size(in),
                                    std::ranges::data(out), counts.data(), displs.data(),
                                    dtype_of<elem<In>>::value, c_, &r));
    return Request(r);
  }
  template <Buffer In, Buffer Out>
  [[nodiscard]] Request ialltoallv(const In &in, const std::vector<std::size_t> &sendcounts,
                                   const std::vector<std::size_t> &sdispls, Out &&out,
                                   const std::vector<std::size_t> &recvcounts,
                                   const std::vector<std::size_t> &rdispls) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    for (std::size_t n : {sendcounts.size(), sdispls.size(), recvcounts.size(), rdispls.size()})
      per_rank(n, "ialltoallv counts and displacements");
    fits(sendcounts, sdispls, std::ranges::size(in), "ialltoallv send");
    fits(recvcounts, rdispls, std::ranges::size(out), "ialltoallv receive");
    braid_request_t r = nullptr;
    detail::check(braid_ialltoallv(std::ranges::data(in), sendcounts.data(), sdispls.data(),
                                   std::ranges::data(out), recvcounts.data(), rdispls.data(),
                                   dtype_of<elem<In>>::value, c_, &r));
    return Request(r);
  }
  template <Buffer In, Buffer Out>
  [[nodiscard]] Request igather(const In &in, Out &&out, int root) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    if (rank() == root) blocks_of(std::ranges::size(in), std::ranges::size(out), "igather");
    braid_request_t r = nullptr;
    detail::check(braid_igather(std::ranges::data(in), std::ranges::data(out),
                                std::ranges::size(in), dtype_of<elem<In>>::value, root, c_, &r));
    return Request(r);
  }
  template <Buffer In, Buffer Out>
  [[nodiscard]] Request iscatter(const In &in, Out &&out, int root) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    if (rank() == root) blocks_of(std::ranges::size(out), std::ranges::size(in), "iscatter");
    braid_request_t r = nullptr;
    detail::check(braid_iscatter(std::ranges::data(in), std::ranges::data(out),
                                 std::ranges::size(out), dtype_of<elem<In>>::value, root, c_, &r));
    return Request(r);
  }
  template <Buffer In, Buffer Out>
  [[nodiscard]] Request ialltoall(const In &in, Out &&out) const {
    static_assert(std::is_same_v<elem<In>, elem<Out>>, "element types differ");
    same_size(std::ranges::size(in), std::ranges::size(out));
    const std::size_t block = block_of(std::ranges::size(in), "ialltoall");
    braid_request_t r = nullptr;
    detail::check(braid_ialltoall(std::ranges::data(in), std::ranges::data(out), block,
                                  dtype_of<elem<In>>::value, c_, &r));
    return Request(r);
  }
  // In place, as alltoall(inout).
  template <Buffer R>
  [[nodiscard]] Request ialltoall(R &&inout) const {
    const std::size_t block = block_of(std::ranges::size(inout), "ialltoall");
    braid_request_t r = nullptr;
    detail::check(braid_ialltoall(std::ranges::data(inout), std::ranges::data(inout), block,
                                  dtype_of<elem<R>>::value, c_, &r));
    return Request(r);
  }

 private:
  template <typename R>
  using elem = std::ranges::range_value_t<R>;
  // `total` must be size() blocks of `block` elements.
  void blocks_of(std::size_t block, std::size_t total, const char *what) const {
    const auto n = static_cast<std::size_t>(size());
    if (block * n != total)
      throw Error(BRAID_ERR_INVALID_ARGUMENT, std::string(what) + ": " + std::to_string(total) +
                                                  " elements are not " + std::to_string(size()) +
                                                  " blocks of " + std::to_string(block));
  }
  std::size_t block_of(std::size_t total, const char *what) const {
    const auto n = static_cast<std::size_t>(size());
    if (n == 0 || total % n != 0)
      throw Error(BRAID_ERR_INVALID_ARGUMENT, std::string(what) + ": " + std::to_string(total) +
                                                  " elements do not divide into " +
                                                  std::to_string(size()) + " blocks");
    return total / n;
  }
  void per_rank(std::size_t n, const char *what) const {
    if (n != static_cast<std::size_t>(size()))
      throw Error(BRAID_ERR_INVALID_ARGUMENT, std::string(what) + " have " + std::to_string(n) +
                                                  " entries for " + std::to_string(size()) +
                                                  " ranks");
  }
  static void fits(const std::vector<std::size_t> &counts, const std::vector<std::size_t> &displs,
                   std::size_t have, const char *what) {
    for (std::size_t r = 0; r < counts.size(); ++r)
      if (counts[r] > 0 && (displs[r] > have || counts[r] > have - displs[r]))
        throw Error(BRAID_ERR_INVALID_ARGUMENT,
                    std::string(what) + ": block " + std::to_string(r) + " (" +
                        std::to_string(counts[r]) + " at " + std::to_string(displs[r]) +
                        ") is past the buffer's " + std::to_string(have) + " elements");
  }
  static void same_size(std::size_t in, std::size_t out) {
    if (in != out)
      throw Error(
          BRAID_ERR_INVALID_ARGUMENT,
          "input has " + std::to_string(in) + " elements but output has " + std::to_string(out));
  }
  struct owned_tag {};
  Comm(braid_comm_t c, owned_tag)
      : c_(c), owner_(new braid_comm_t(c), [](braid_comm_t *h) {
          if (*h != nullptr) (void)braid_comm_free(h);
          delete h;
        }) {}
  braid_comm_t c_;
  std::shared_ptr<braid_comm_t> owner_;  // set when this Comm frees the handle
};

// Allocator over braid_mem_alloc: pages bound to one NUMA node (default: the rank's own) and
// registered with the transport once per communicator, so collectives on them pay no
// per-call registration. Any instance frees any other's memory (braid_mem_free).
//
//   braid::numa_vector<float> v(n, 0.0f);                           // on this rank's node
//   std::vector<float, braid::NumaAllocator<float>> w(n, 0.0f, braid::NumaAllocator<float>(1));
template <typename T>
class NumaAllocator {
 public:
  using value_type = T;
  using is_always_equal = std::true_type;

  NumaAllocator() noexcept = default;
  explicit NumaAllocator(int numa_node) noexcept : node_(numa_node) {}
  template <typename U>
  NumaAllocator(const NumaAllocator<U> &other) noexcept : node_(other.numa_node()) {}

  // Throws braid::Error (BRAID_ERR_INVALID_ARGUMENT for a node that does not exist).
  T *allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    void *p = nullptr;
    detail::check(braid_mem_alloc((n > 0 ? n : 1) * sizeof(T), node_, &p));
    return static_cast<T *>(p);
  }
  void deallocate(T *p, std::size_t) noexcept { (void)braid_mem_free(p); }
  int numa_node() const noexcept { return node_; }

  template <typename U>
  bool operator==(const NumaAllocator<U> &) const noexcept {
    return true;
  }

 private:
  int node_ = BRAID_NUMA_LOCAL;
};

template <typename T>
using numa_vector = std::vector<T, NumaAllocator<T>>;

// A fresh id for Comm::from_unique_id; this process answers the group's rendezvous until it
// exits.
inline braid_unique_id_t unique_id() {
  braid_unique_id_t id{};
  detail::check(braid_get_unique_id(&id));
  return id;
}

// Joins the job on construction and leaves it on destruction (one per process).
class Session {
 public:
  Session() { detail::check(braid_init(nullptr, nullptr, &world_)); }
  Session(int &argc, char **&argv) { detail::check(braid_init(&argc, &argv, &world_)); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { (void)braid_finalize(); }
  Comm world() const { return Comm(world_); }

 private:
  braid_comm_t world_ = nullptr;
};

}  // namespace braid
