// braidrun's rendezvous service, for jobs that span hosts. braidrun cannot know in advance an
// address and a free port on rank 0's host that the other hosts can reach, so rank 0 listens on
// a port its kernel picks and registers its addresses here; the other ranks ask here. Every
// rank finds this service through BRAID_RENDEZVOUS (the addresses of this machine's interfaces
// chosen by BRAID_SOCKET_IFNAME or automatically) and proves membership with BRAID_JOB_KEY.
// The protocol is described in src/job/rendezvous_board.hpp, the client side.
//
// The service runs on its own thread (braidrun's main thread sleeps in the supervisor's poll),
// started before the first rank so that no rank can look for it too early.
#pragma once

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "unique_fd.hpp"

namespace braidrun {

class RendezvousService {
 public:
  // Listens on every interface on a port the kernel picks. ifname: BRAID_SOCKET_IFNAME or
  // nullptr. verbose: log the chosen addresses and registrations (BRAID_DEBUG=info|trace).
  // Throws std::runtime_error when no address can be chosen or the socket fails.
  RendezvousService(std::string job_key, const char *ifname, bool verbose);
  ~RendezvousService();  // stops and joins the thread
  RendezvousService(const RendezvousService &) = delete;
  RendezvousService &operator=(const RendezvousService &) = delete;

  // The value for BRAID_RENDEZVOUS: "192.0.2.2:41000,10.200.9.1:41000".
  const std::string &addresses() const { return addresses_; }

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
  void read_request(Client &client);
  void handle(Client &client, const std::string &line);
  void answer(Client &client, const std::string &reply);
  void refuse(Client &client, const std::string &why);

  const std::string job_key_;
  const bool verbose_;
  UniqueFd listener_;
  UniqueFd stop_read_, stop_write_;
  std::string addresses_;
  std::vector<Client> clients_;
  std::optional<std::string> root_;  // rank 0's addresses once it registered
  std::thread thread_;
};

}  // namespace braidrun
