// The ContactBoard of braidrun jobs that span hosts: braidrun's rendezvous service, at the
// addresses in BRAID_RENDEZVOUS. Rank 0 registers where it listens; the others ask for it.
//
// Protocol (text, one line each way; the same is implemented by tools/braidrun/rendezvous.cpp):
//   rank 0 -> braidrun: "braid-rendezvous 1 <job key> 0 publish <addresses>\n"
//   braidrun -> rank 0: "ok\n"
//   rank r -> braidrun: "braid-rendezvous 1 <job key> <r> lookup\n"
//   braidrun -> rank r: "root <addresses>\n", as soon as rank 0 has published
//   rank 0 -> braidrun: "braid-rendezvous 1 <job key> 0 failed <text>\n", when it could not
//                       listen or choose an address; lookups are then answered "error <text>"
//   rank 0 -> braidrun: "braid-rendezvous 1 <job key> 0 formed\n", once every rank joined it
//   braidrun -> rank 0: "ok\n"; then the service closes its port and its thread ends
//   on any problem:     "error <text>\n", then the connection is closed
// <addresses> is the comma-separated host:port list of root_contact.hpp. The job key keeps
// other jobs (and strangers) from reading or replacing rank 0's address.
#pragma once

#include <vector>

#include "config/env_config.hpp"
#include "job/root_contact.hpp"

namespace braid::detail {

class RendezvousBoard final : public ContactBoard {
 public:
  RendezvousBoard(std::vector<Endpoint> service, std::string job_key, int rank, double timeout_s)
      : service_(std::move(service)),
        job_key_(std::move(job_key)),
        rank_(rank),
        timeout_s_(timeout_s) {}
  RootContact share(const RootContact *mine) override;
  void formed() override;

 private:
  void say(const std::string &what, const char *why);
  void tell_failure(std::string text);

  std::vector<Endpoint> service_;
  std::string job_key_;
  int rank_;
  double timeout_s_;
};

}  // namespace braid::detail
