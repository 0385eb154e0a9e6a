// The bootstrap: how the ranks of a job find each other and exchange the small amounts of data
// (endpoint addresses, hostnames) needed before a real transport exists. It is deliberately
// simple and slow; collectives on user data go through the transport, never through here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/address.hpp"
#include "bootstrap/socket.hpp"
#include "bootstrap/star.hpp"

namespace braid::detail {

struct BootstrapConfig {
  int rank = 0;
  int size = 1;
  std::string host;     // where rank 0 listens: a name, an IPv4 address or an IPv6 address
  uint16_t port = 0;    // without brackets (see parse_host_port in address.hpp)
  std::string job_key;  // shared secret every connection presents; empty means "no key"
  double timeout_s = 300;
  // Ranks other than 0: more addresses of rank 0 (its other interfaces), tried in order after
  // host:port. The first that accepts the connection is used, so a rank commits only to an
  // address it has actually reached.
  std::vector<bs::HostPort> more_addresses = {};
};

// Rank 0's listening socket, made before the job is formed so that its port can be chosen by
// the kernel and published (through PMIx or braidrun) before anyone connects.
class BootstrapListener {
 public:
  // Listens on every interface (IPv4 only, or IPv4 and IPv6 when ipv6 is true) on a port the
  // kernel picks. Throws Failure(BRAID_ERR_BOOTSTRAP) saying why it could not.
  static BootstrapListener on_any_interface(bool ipv6);
  uint16_t port() const { return port_; }
  // For make_tcp_bootstrap: hands over the socket.
  bs::Fd release() && { return std::move(fd_); }

 private:
  bs::Fd fd_;
  uint16_t port_ = 0;
};

// Abstract so that other bootstrap networks can be added. One thread at a time per object.
// After a failure other than BRAID_ERR_MISMATCH or BRAID_ERR_INVALID_ARGUMENT the object is
// unusable: later calls throw again, naming the first failure.
class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank contributes `bytes` bytes; out gets size*bytes, rank r's at r*bytes. All ranks
  // must pass the same bytes (a rank passing a different size is a BRAID_ERR_MISMATCH Failure
  // naming both ranks' sizes, on every rank). `in` may point into `out`.
  virtual void allgather(const void *in, void *out, size_t bytes) = 0;
  virtual void barrier() = 0;
  // Rank r's hostname as it reported it at connection (for finding ranks on the same node).
  virtual const std::string &host_of(int r) const = 0;
  // After init: hands the job's connections over to the control plane (control/), which keeps
  // them open to learn of failed ranks. The bootstrap is unusable afterwards. nullopt for a
  // bootstrap without such connections.
  virtual std::optional<bs::Star> take_star() { return std::nullopt; }
};

// Forms the job: rank 0 listens on host:port and accepts the other size-1 ranks; the others
// connect, retrying with exponential backoff (10 ms .. 1 s) until timeout_s. size == 1 needs
// no network. Throws Failure(BRAID_ERR_BOOTSTRAP, ...) when the job cannot be formed.
std::unique_ptr<Bootstrap> make_tcp_bootstrap(const BootstrapConfig &cfg);
// Rank 0 only: the same, accepting on a listener made earlier. cfg.host:cfg.port is then only
// the address shown in messages (the one published first).
std::unique_ptr<Bootstrap> make_tcp_bootstrap(const BootstrapConfig &cfg,
                                              BootstrapListener listener);

}  // namespace braid::detail
