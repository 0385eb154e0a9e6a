#include "p2p_endpoint.hpp"

#include <braid/braid.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "memory/plugin_numa_args.hpp"
#include "memory/topology.hpp"

namespace braid_bench::p2p {
namespace {

constexpr uint64_t kDataTag = 1;
constexpr uint64_t kAckTag = 2;
constexpr size_t kAckBytes = 4;
constexpr double kTimeoutS = 60;  // a peer silent this long is treated as dead
constexpr auto kSpinFor = std::chrono::microseconds(50);

// ---- the socketpair: exact reads and writes ----------------------------------------------

bool write_all(int fd, const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void *data, size_t n) {
  char *p = static_cast<char *>(data);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;  // 0: the other process closed its end (exited)
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// ---- a 2-rank bootstrap over the socketpair, as the plugin ABI wants it ---------------------

int pair_allgather(void *ctx, const void *in, void *out, size_t bytes) {
  const auto *b = static_cast<const PairBootstrap *>(ctx);
  auto *o = static_cast<unsigned char *>(out);
  unsigned char *mine = o + static_cast<size_t>(b->rank) * bytes;
  unsigned char *theirs = o + static_cast<size_t>(1 - b->rank) * bytes;
  if (bytes > 0 && in != mine) std::memmove(mine, in, bytes);
  const uint64_t my_size = bytes;
  uint64_t their_size = 0;
  // Rank 0 writes first and rank 1 reads first, so neither waits on a full socket buffer.
  auto send = [&] {
    return write_all(b->fd, &my_size, sizeof my_size) && write_all(b->fd, mine, bytes);
  };
  auto receive_size = [&] { return read_all(b->fd, &their_size, sizeof their_size); };
  if (b->rank == 0) {
    if (!send() || !receive_size()) return BRAID_ERR_BOOTSTRAP;
  } else {
    if (!receive_size()) return BRAID_ERR_BOOTSTRAP;
  }
  if (their_size != my_size) return BRAID_ERR_MISMATCH;  // both sides see it; stream is dead
  if (!read_all(b->fd, theirs, bytes)) return BRAID_ERR_BOOTSTRAP;
  if (b->rank == 1 && !send()) return BRAID_ERR_BOOTSTRAP;
  return BRAID_SUCCESS;
}

int pair_barrier(void *ctx) {
  const unsigned char in = 0;
  unsigned char out[2];
  return pair_allgather(ctx, &in, out, 1);
}

void plugin_log(int level, const char *msg) {
  if (level <= 0) std::fprintf(stderr, "braid-micro-p2p: plugin warning: %s\n", msg);
}

// Rank 1's answer to each command.
struct Reply {
  int32_t status;  // BRAID_SUCCESS or the first error
  char message[252];
};

Buffer allocate(size_t bytes) {
  void *p = nullptr;
  if (posix_memalign(&p, 4096, bytes) != 0) return nullptr;
  std::memset(p, 0x5a, bytes);  // fault the pages in before any timing
  return Buffer(static_cast<unsigned char *>(p));
}

}  // namespace

int64_t Endpoint::counter(const char *name) {
  braid_transport_counter_t all[64];
  size_t n = 64;
  if (ops_->counters == nullptr || ops_->counters(ctx_, all, &n) != BRAID_SUCCESS) return -1;
  for (size_t i = 0; i < std::min<size_t>(n, 64); ++i)
    if (std::strcmp(all[i].name, name) == 0) return static_cast<int64_t>(all[i].value);
  return -1;
}

bool Endpoint::start() {
  detail_plugin_ = std::make_unique<braid::detail::Plugin>();
  std::string why;
  if (!braid::detail::open_plugin(name_, detail_plugin_.get(), &why))
    return fail_with("cannot load: " + why);
  ops_ = detail_plugin_->ops;
  char reason[256] = {0};
  if (ops_->probe != nullptr && ops_->probe(reason, sizeof reason) == 0) {
    not_usable_ = true;
    return fail_with(std::string("not usable here: ") + reason);
  }
  braid_bootstrap_t bs{&boot_, boot_.rank, 2, pair_allgather, pair_barrier};
  braid_transport_init_args_t args{};
  args.bootstrap = &bs;
  args.local_rank = boot_.rank;
  args.local_size = 2;
  args.timeout_s = kTimeoutS;
  args.err = err_;
  args.err_len = sizeof err_;
  args.log = plugin_log;
  braid::detail::fill_numa_args(&args, braid::detail::Topology::get().bound_node());
  if (int rc = ops_->init(&args, &ctx_); rc != BRAID_SUCCESS) {
    ctx_ = nullptr;
    return fail_with("init failed (" + std::to_string(rc) + "): " + err_);
  }
  if (ops_->get_properties(ctx_, &props_) != BRAID_SUCCESS)
    return fail_with(std::string("get_properties failed: ") + err_);
  if (props_.max_message == 0) props_.max_message = size_t{1} << 30;
  send_buf_ = allocate(kMaxBytes);
  recv_buf_ = allocate(kWindowBytes);
  if (!send_buf_ || !recv_buf_) return fail_with("out of memory");
  return true;
}

bool Endpoint::round_trip(size_t bytes) {
  braid_transport_req_t reqs[2];
  return post_recv(kDataTag, recv_buf_.get(), bytes, &reqs[0]) &&
         post_send(kDataTag, send_buf_.get(), bytes, &reqs[1]) && wait_all(reqs, 2);
}

bool Endpoint::send_window(size_t bytes, size_t window) {
  braid_transport_req_t reqs[kMaxWindow + 1];
  if (!post_recv(kAckTag, recv_buf_.get(), kAckBytes, &reqs[window])) return false;
  for (size_t i = 0; i < window; ++i)
    if (!post_send(kDataTag, send_buf_.get(), bytes, &reqs[i])) return false;
  return wait_all(reqs, window + 1);
}

bool Endpoint::command(const Command &c) {
  if (!write_all(boot_.fd, &c, sizeof c)) return fail_with("the peer process is gone");
  return true;
}

bool Endpoint::await_reply() {
  Reply reply{};
  if (!read_all(boot_.fd, &reply, sizeof reply)) return fail_with("the peer process is gone");
  if (reply.status != BRAID_SUCCESS)
    return fail_with(std::string("peer: ") +
                     std::string(reply.message, strnlen(reply.message, sizeof reply.message)));
  return true;
}

int Endpoint::serve() {
  for (;;) {
    Command c{};
    if (!read_all(boot_.fd, &c, sizeof c)) return 1;  // rank 0 exited without quit
    bool ok = true;
    if (c.kind == Kind::pingpong) {
      for (uint64_t i = 0; ok && i < c.iterations; ++i) ok = echo(c.bytes);
    } else if (c.kind == Kind::stream) {
      for (uint64_t i = 0; ok && i < c.iterations; ++i) ok = receive_window(c.bytes, c.window);
    }
    Reply reply{};
    reply.status = ok ? BRAID_SUCCESS : BRAID_ERR_TRANSPORT;
    std::snprintf(reply.message, sizeof reply.message, "%s", error_.c_str());
    if (!write_all(boot_.fd, &reply, sizeof reply)) return 1;
    if (c.kind == Kind::quit) return 0;
    if (!ok) return 1;
  }
}

bool Endpoint::fail_with(const std::string &message) {
  if (error_.empty()) error_ = message;
  return false;
}

bool Endpoint::post_send(uint64_t tag, const void *buf, size_t bytes, braid_transport_req_t *req) {
  if (int rc = ops_->isend(ctx_, 1 - boot_.rank, tag, buf, bytes, nullptr, req); rc != 0)
    return fail_with("isend of " + std::to_string(bytes) + " bytes: " + err_);
  return true;
}

bool Endpoint::post_recv(uint64_t tag, void *buf, size_t bytes, braid_transport_req_t *req) {
  if (int rc = ops_->irecv(ctx_, 1 - boot_.rank, tag, buf, bytes, nullptr, req); rc != 0)
    return fail_with("irecv of " + std::to_string(bytes) + " bytes: " + err_);
  return true;
}

bool Endpoint::wait_all(braid_transport_req_t *reqs, size_t n) {
  using Clock = std::chrono::steady_clock;
  size_t pending = n;
  uint64_t passes = 0;
  bool idle_clock_started = false;
  Clock::time_point idle_since;
  bool yielding = false;
  while (pending > 0) {
    if (ops_->progress(ctx_) != BRAID_SUCCESS) return fail_with(std::string("progress: ") + err_);
    bool completed = false;
    for (size_t i = 0; i < n; ++i) {
      if (reqs[i] == nullptr) continue;
      int done = 0;
      if (ops_->test(ctx_, reqs[i], &done, nullptr) != BRAID_SUCCESS) {
        reqs[i] = nullptr;
        return fail_with(std::string("request failed: ") + err_);
      }
      if (done) {
        reqs[i] = nullptr;
        --pending;
        completed = true;
      }
    }
    if (pending == 0) break;
    if (completed) {
      passes = 0;
      yielding = false;
      idle_clock_started = false;
      continue;
    }
    if (yielding) {
      sched_yield();
    } else if (++passes % 1024 != 0) {
      continue;
    }
    const auto now = Clock::now();
    if (!idle_clock_started) {
      idle_clock_started = true;
      idle_since = now;
      continue;
    }
    const auto idle = now - idle_since;
    if (idle > std::chrono::duration<double>(kTimeoutS))
      return fail_with("no progress for " + std::to_string(kTimeoutS) + " s");
    yielding = idle > kSpinFor;
  }
  return true;
}

bool Endpoint::echo(size_t bytes) {
  braid_transport_req_t req;
  if (!post_recv(kDataTag, recv_buf_.get(), bytes, &req) || !wait_all(&req, 1)) return false;
  return post_send(kDataTag, recv_buf_.get(), bytes, &req) && wait_all(&req, 1);
}

bool Endpoint::receive_window(size_t bytes, size_t window) {
  braid_transport_req_t reqs[kMaxWindow];
  for (size_t i = 0; i < window; ++i)
    if (!post_recv(kDataTag, recv_buf_.get() + i * bytes, bytes, &reqs[i])) return false;
  if (!wait_all(reqs, window)) return false;
  braid_transport_req_t ack;
  return post_send(kAckTag, send_buf_.get(), kAckBytes, &ack) && wait_all(&ack, 1);
}

}  // namespace braid_bench::p2p
