// The rendezvous service: nobody knows in advance an address and a free port on rank 0's host
// that the other hosts can reach, so rank 0 listens on a port its kernel picks and registers
// its addresses here; the other ranks ask here. Used by braidrun for jobs that span hosts
// (ranks find it through BRAID_RENDEZVOUS and prove membership with BRAID_JOB_KEY) and by
// braid_get_unique_id (the id carries its addresses and the key). The protocol is described in
// src/job/rendezvous_board.hpp, the client side.
//
// The service runs on its own thread, started before any rank can look for it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <functional>

#include "net/unique_fd.hpp"

namespace braid::net {

class RendezvousService {
 public:
  // Listens on every interface on a port the kernel picks. ifname: BRAID_SOCKET_IFNAME or
  // nullptr. `log` gets what the service has to say (refused clients always; with verbose, the
  // chosen addresses and registrations too). Throws std::runtime_error when no address can be
  // chosen or the socket fails.
  using Log = std::function<void(const std::string &)>;
  RendezvousService(std::string job_key, const char *ifname, bool verbose, Log log);
  // Stops and joins the thread. In a child forked after the service started (a launcher that
  // makes an id, then forks its ranks), the thread and the service are the parent's: the
  // child's copy only lets go of its descriptors.
  ~RendezvousService();
  RendezvousService(const RendezvousService &) = delete;
  RendezvousService &operator=(const RendezvousService &) = delete;

  // The value for BRAID_RENDEZVOUS: "192.0.2.2:41000,10.200.9.1:41000".
  const std::string &addresses() const { return addresses_; }
  // Rank 0 said that its job formed ("formed"): the service closed its port and its thread
  // ended, having nothing left to do. (A unique id serves one group: its process then need not
  // keep a thread and descriptors per id it ever made.)
  bool finished() const { return finished_.load(std::memory_order_acquire); }

 private:
  struct Client {
    UniqueFd fd;
    std::string peer;
    std::string received;
    bool waiting = false;  // a lookup waiting for rank 0 to register
    long long deadline_ms = 0;
  };

  void run();
  void accept_clients();
  bool drop_oldest_silent();
  void read_request(Client &client);
  void handle(Client &client, const std::string &line);
  void answer(Client &client, const std::string &reply);
  void refuse(Client &client, const std::string &why);
  // Refused with `why`, without a warning: the rank is told of rank 0's failure, not refused
  // for anything it did.
  void refuse_silently(Client &client, const std::string &why);
  std::string failed_text() const;

  const std::string job_key_;
  const bool verbose_;
  const Log log_;
  UniqueFd listener_;
  UniqueFd stop_read_, stop_write_;
  std::string addresses_;
  std::vector<Client> clients_;
  std::optional<std::string> root_;       // rank 0's addresses once it registered
  std::string failure_;                   // why rank 0 could not register, once it said so
  long long accept_paused_until_ms_ = 0;  // accept ran out of descriptors: wait until then
  bool accept_failing_ = false;           // said once per spell of failures
  size_t dropped_ = 0;                    // silent connections closed to make room, not yet said
  long long flood_logged_ms_ = 0;
  const pid_t owner_;  // the process whose thread serves
  bool formed_ = false;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace braid::net
