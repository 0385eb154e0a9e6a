#include "comm/transport.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

#include "bootstrap/bootstrap.hpp"
#include "config/env_config.hpp"
#include "error.hpp"
#include "log.hpp"
#include "memory/plugin_numa_args.hpp"

namespace braid::detail {
namespace {

// Adapters from the C bootstrap table the ABI hands to plugins onto the C++ Bootstrap; plugins
// get result codes, never exceptions.
int bootstrap_allgather(void *ctx, const void *in, void *out, size_t bytes) {
  try {
    static_cast<Bootstrap *>(ctx)->allgather(in, out, bytes);
    return BRAID_SUCCESS;
  } catch (const Failure &f) {
    log(LogLevel::warn, "transport init: ", f.message());
    return f.code();
  }
}

int bootstrap_barrier(void *ctx) {
  try {
    static_cast<Bootstrap *>(ctx)->barrier();
    return BRAID_SUCCESS;
  } catch (const Failure &f) {
    log(LogLevel::warn, "transport init: ", f.message());
    return f.code();
  }
}

void plugin_log(int level, const char *msg) {
  log(level <= 0 ? LogLevel::warn : level == 1 ? LogLevel::info : LogLevel::trace, msg);
}

}  // namespace

Transport::Transport(Plugin plugin, Bootstrap &bootstrap, int local_rank, int local_size,
                     double timeout_s, int numa_node)
    : plugin_(std::move(plugin)), ops_(plugin_.ops) {
  braid_bootstrap_t bs{&bootstrap, bootstrap.rank(), bootstrap.size(), bootstrap_allgather,
                       bootstrap_barrier};
  // Parsed first: a malformed value fails before there is a plugin context to tear down.
  size_t max_message_cap = 0;
  if (const char *cap = std::getenv("BRAID_MAX_MESSAGE"); cap != nullptr && *cap != '\0')
    max_message_cap = static_cast<size_t>(parse_integer(cap, "BRAID_MAX_MESSAGE", 1, LLONG_MAX));
  // A v1 plugin gets the same struct and reads only the fields it knows (a prefix).
  braid_transport_init_args_t args{};
  args.bootstrap = &bs;
  args.local_rank = local_rank;
  args.local_size = local_size;
  args.timeout_s = timeout_s;
  args.err = err_;
  args.err_len = sizeof err_;
  args.log = plugin_log;
  fill_numa_args(&args, numa_node);
  int rc = ops_->init(&args, &ctx_);
  if (rc != BRAID_SUCCESS) raise(rc, "init");
  rc = ops_->get_properties(ctx_, &props_);
  if (rc != BRAID_SUCCESS) raise(rc, "get_properties");
  if (props_.max_message == 0) props_.max_message = size_t{1} << 30;
  // BRAID_MAX_MESSAGE lowers the largest message handed to the transport (larger ones go in
  // chunks): for a device with a smaller limit than its plugin states, and for tests of the
  // chunking without gigabytes of buffers. The same on every rank.
  if (max_message_cap > 0) props_.max_message = std::min(props_.max_message, max_message_cap);
  if (props_.tag_bits < 32)
    fail(BRAID_ERR_TRANSPORT, plugin_.path, ": tag_bits ", props_.tag_bits, " is below 32");
  if (ops_->reg_mr != nullptr && ops_->dereg_mr != nullptr) {
    registrations_ = std::make_unique<RegistrationCache>(
        RegionRegistry::instance(),
        [this](void *addr, size_t bytes) -> void * {
          braid_transport_mr_t mr = nullptr;
          if (call([&] { return ops_->reg_mr(ctx_, addr, bytes, &mr); }) != BRAID_SUCCESS) {
            // Unregistered memory still works (the plugin registers internally); only slower.
            log(LogLevel::warn, plugin_.name, " transport: registering ", bytes,
                " bytes failed, using the region unregistered: ", err_);
            err_[0] = '\0';
            return nullptr;
          }
          log(LogLevel::trace, plugin_.name, " transport: registered ", bytes, " bytes at ", addr);
          return mr;
        },
        [this](void *mr) {
          std::unique_lock lock(mutex_, std::try_to_lock);
          if (lock.owns_lock()) {
            deregister(mr);
            return;
          }
          std::lock_guard deferred(deferred_mutex_);
          deferred_deregs_.push_back(mr);
          has_deferred_.store(true, std::memory_order_release);
        });
  }
}

Transport::~Transport() {
  registrations_.reset();  // deregisters while the context exists
  enter();                 // and the deferred ones
  if (ctx_ != nullptr) ops_->finalize(ctx_);
}

template <typename F>
int Transport::call(F &&f) {
#ifndef NDEBUG
  if (callers_.fetch_add(1, std::memory_order_acq_rel) != 0) {
    std::fprintf(stderr, "braid: two threads inside the %s transport plugin at once\n",
                 plugin_.name.c_str());
    std::abort();
  }
  int rc = f();
  callers_.fetch_sub(1, std::memory_order_acq_rel);
  return rc;
#else
  return f();
#endif
}

std::unique_lock<std::mutex> Transport::enter() {
  std::unique_lock lock(mutex_);
  if (has_deferred_.load(std::memory_order_acquire)) {
    std::vector<void *> mrs;
    {
      std::lock_guard deferred(deferred_mutex_);
      mrs.swap(deferred_deregs_);
      has_deferred_.store(false, std::memory_order_relaxed);
    }
    for (void *mr : mrs) deregister(mr);
  }
  return lock;
}

void Transport::deregister(void *mr) {
  if (call([&] { return ops_->dereg_mr(ctx_, mr); }) != BRAID_SUCCESS) {
    log(LogLevel::warn, plugin_.name, " transport: deregistration failed: ", err_);
    err_[0] = '\0';
  }
}

void Transport::raise(int code, const char *what) {
  std::string detail = err_[0] ? std::string(err_) : std::string("(no detail from the plugin)");
  err_[0] = '\0';
  fail(static_cast<braid_result_t>(code), plugin_.name, " transport ", what, ": ", detail);
}

braid_transport_req_t Transport::isend(int peer, uint64_t tag, const void *buf, size_t bytes,
                                       braid_transport_mr_t mr) {
  auto lock = enter();
  braid_transport_req_t req = nullptr;
  int rc = call([&] { return ops_->isend(ctx_, peer, tag, buf, bytes, mr, &req); });
  if (rc != BRAID_SUCCESS) raise(rc, "send");
  return req;
}

braid_transport_req_t Transport::irecv(int peer, uint64_t tag, void *buf, size_t bytes,
                                       braid_transport_mr_t mr) {
  auto lock = enter();
  braid_transport_req_t req = nullptr;
  int rc = call([&] { return ops_->irecv(ctx_, peer, tag, buf, bytes, mr, &req); });
  if (rc != BRAID_SUCCESS) raise(rc, "receive");
  return req;
}

bool Transport::test(braid_transport_req_t req, size_t *bytes) {
  auto lock = enter();
  int done = 0;
  int rc = call([&] { return ops_->test(ctx_, req, &done, bytes); });
  if (rc != BRAID_SUCCESS) raise(rc, "completion");
  return done != 0;
}

void Transport::progress() {
  auto lock = enter();
  int rc = call([&] { return ops_->progress(ctx_); });
  if (rc != BRAID_SUCCESS) raise(rc, "progress");
  if (!abandoned_.empty()) {
    std::erase_if(abandoned_, [this](braid_transport_req_t req) {
      int done = 0;
      size_t bytes = 0;
      // A failed request is freed by the plugin too; either way it is gone.
      if (call([&] { return ops_->test(ctx_, req, &done, &bytes); }) != BRAID_SUCCESS) {
        err_[0] = '\0';
        return true;
      }
      return done != 0;
    });
  }
}

void Transport::abandon(braid_transport_req_t req) noexcept {
  auto lock = enter();
  try {
    abandoned_.push_back(req);
  } catch (...) {
    cancel_held(req);
  }
}

void Transport::wait(int timeout_ms) {
  if (ops_->wait == nullptr || shared_by_threads_.load(std::memory_order_relaxed)) {
    usleep(100);
    return;
  }
  auto lock = enter();
  int rc = call([&] { return ops_->wait(ctx_, timeout_ms); });
  if (rc != BRAID_SUCCESS) raise(rc, "wait");
}

void Transport::cancel(braid_transport_req_t req) noexcept {
  auto lock = enter();
  cancel_held(req);
}

void Transport::cancel_held(braid_transport_req_t req) noexcept {
  if (call([&] { return ops_->cancel(ctx_, req); }) != BRAID_SUCCESS) {
    log(LogLevel::warn, plugin_.name, " transport cancel: ", err_);
    err_[0] = '\0';
  }
}

std::vector<braid_transport_counter_t> Transport::counters() {
  auto lock = enter();
  std::vector<braid_transport_counter_t> out(64);
  size_t n = out.size();
  if (ops_->counters == nullptr ||
      call([&] { return ops_->counters(ctx_, out.data(), &n); }) != BRAID_SUCCESS)
    return {};
  out.resize(std::min(n, out.size()));
  return out;
}

}  // namespace braid::detail
