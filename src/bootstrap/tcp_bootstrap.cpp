// The TCP bootstrap: a star of connections through rank 0 (see rendezvous.hpp for how it is
// formed and collective.hpp for how it is used). Rank 0 holds one connection per rank; the
// traffic is a few small messages at init, so the star's simplicity beats any tree.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>

#include "bootstrap/address.hpp"
#include "bootstrap/bootstrap.hpp"
#include "bootstrap/collective.hpp"
#include "bootstrap/rendezvous.hpp"
#include "bootstrap/wire.hpp"
#include "error.hpp"
#include "log.hpp"

namespace braid::detail {
namespace {

void check_config(const BootstrapConfig &cfg) {
  if (cfg.size < 1) fail(BRAID_ERR_BOOTSTRAP, "bootstrap: job size ", cfg.size, " is not >= 1");
  if (cfg.rank < 0 || cfg.rank >= cfg.size)
    fail(BRAID_ERR_BOOTSTRAP, "bootstrap: rank ", cfg.rank, " is not in 0..", cfg.size - 1);
  if (!(cfg.timeout_s > 0) || !std::isfinite(cfg.timeout_s))
    fail(BRAID_ERR_BOOTSTRAP, "rank ", cfg.rank, ": bootstrap timeout ", cfg.timeout_s,
         " s is not a positive number");
  if (cfg.job_key.size() > bs::kMaxKeyBytes)
    fail(BRAID_ERR_BOOTSTRAP, "rank ", cfg.rank, ": job key is ", cfg.job_key.size(),
         " bytes; the limit is ", bs::kMaxKeyBytes);
  if (cfg.size > 1 && (cfg.host.empty() || cfg.port == 0))
    fail(BRAID_ERR_BOOTSTRAP, "rank ", cfg.rank, ": a job of ", cfg.size,
         " ranks needs rank 0's address (host and a port in 1..65535)");
}

class TcpBootstrap final : public Bootstrap {
 public:
  TcpBootstrap(const BootstrapConfig &cfg, bs::Star star)
      : rank_(cfg.rank), size_(cfg.size), timeout_s_(cfg.timeout_s), star_(std::move(star)) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allgather(const void *in, void *out, size_t bytes) override {
    run(bs::FrameType::allgather, "bootstrap allgather: ", in, out, bytes);
  }
  void barrier() override {
    run(bs::FrameType::barrier, "bootstrap barrier: ", nullptr, nullptr, 0);
  }

  const std::string &host_of(int r) const override {
    if (r < 0 || r >= size_)
      fail(BRAID_ERR_INVALID_ARGUMENT, "bootstrap host_of: rank ", r, " is not in 0..", size_ - 1);
    return star_.hosts[r];
  }

  std::optional<bs::Star> take_star() override {
    if (broken_) return std::nullopt;
    broken_ = Failure(BRAID_ERR_INTERNAL, "its connections now serve the control plane");
    bs::Star out;
    out.to_root = std::move(star_.to_root);
    out.to_rank = std::move(star_.to_rank);
    out.hosts = star_.hosts;  // host_of stays available
    return out;
  }

 private:
  void run(bs::FrameType kind, const char *op, const void *in, void *out, size_t bytes) {
    if (broken_)
      fail(broken_->code(), op,
           "the bootstrap is unusable after an earlier failure: ", broken_->message());
    if (bytes > 0 && (in == nullptr || out == nullptr))
      fail(BRAID_ERR_INVALID_ARGUMENT, op, "null buffer for ", bytes, " bytes");
    if (bytes > bs::kMaxPayloadBytes / static_cast<uint64_t>(size_))
      fail(BRAID_ERR_INVALID_ARGUMENT, op, size_, " ranks x ", bytes,
           " bytes exceeds the bootstrap's limit of ", bs::kMaxPayloadBytes, " bytes");
    if (size_ == 1) {
      if (bytes > 0) std::memmove(out, in, bytes);
      return;
    }
    const bs::CollectiveCall call{kind, op, seq_, in, out, bytes, size_, timeout_s_};
    try {
      if (rank_ == 0)
        bs::root_collective(star_, call);
      else
        bs::leaf_collective(star_, call);
      ++seq_;
    } catch (const Failure &failure) {
      // After a mismatch every connection is still in step; after anything else it may not
      // be, so refuse further use rather than risk misreading the stream.
      if (failure.code() == BRAID_ERR_MISMATCH)
        ++seq_;
      else
        broken_ = failure;
      throw;
    }
  }

  const int rank_;
  const int size_;
  const double timeout_s_;
  bs::Star star_;
  uint32_t seq_ = 1;  // 0 was the hosts frame that formed the job
  std::optional<Failure> broken_;
};

std::unique_ptr<Bootstrap> form(const BootstrapConfig &cfg, bs::Fd listener) {
  check_config(cfg);
  bs::Star star;
  if (cfg.size == 1)
    star.hosts = {bs::local_hostname()};
  else if (cfg.rank == 0)
    star = bs::accept_ranks(cfg, std::move(listener));
  else
    star = bs::join_root(cfg);
  log(LogLevel::info, "bootstrap: job of ", cfg.size, " ranks formed");
  return std::make_unique<TcpBootstrap>(cfg, std::move(star));
}

}  // namespace

BootstrapListener BootstrapListener::on_any_interface(bool ipv6) {
  const std::string any = ipv6 ? "::" : "0.0.0.0";
  BootstrapListener listener;
  std::string error;
  listener.fd_ = bs::listen_on(any, 0, &error);
  if (!listener.fd_.valid())
    fail(BRAID_ERR_BOOTSTRAP, "rank 0: could not listen on ", bs::format_host_port(any, 0), ": ",
         error);
  listener.port_ = bs::local_port(listener.fd_.get());
  if (listener.port_ == 0)
    fail(BRAID_ERR_BOOTSTRAP,
         "rank 0: could not read the port of its bootstrap listener: ", bs::errno_text(errno));
  return listener;
}

std::unique_ptr<Bootstrap> make_tcp_bootstrap(const BootstrapConfig &cfg) {
  return form(cfg, bs::Fd());
}

std::unique_ptr<Bootstrap> make_tcp_bootstrap(const BootstrapConfig &cfg,
                                              BootstrapListener listener) {
  if (cfg.rank != 0)
    fail(BRAID_ERR_INTERNAL, "rank ", cfg.rank, ": a bootstrap listener is for rank 0 only");
  return form(cfg, std::move(listener).release());
}

}  // namespace braid::detail
