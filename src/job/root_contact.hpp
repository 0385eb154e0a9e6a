// Forming the job when nobody knows rank 0's address in advance (PMIx jobs, braidrun jobs that
// span hosts): rank 0 listens on every interface on a port the kernel picks, then publishes
// the addresses of the interfaces BRAID_SOCKET_IFNAME or the automatic choice selects, through
// a ContactBoard. The other ranks receive them and use the first they can actually reach, so
// no rank commits to an address it cannot reach.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bootstrap/address.hpp"
#include "bootstrap/bootstrap.hpp"

namespace braid::detail {

struct RootContact {
  std::vector<bs::HostPort> addresses;  // in order of preference
  std::string job_key;                  // empty when the board's ranks already share one
  // Rank 0's reason when it could not listen or choose an address: published where the board
  // can carry it (PMIx), so that the others fail at once, naming it, instead of waiting for an
  // address that never comes. The others' share() throws it.
  std::string failure;
};

// "10.0.0.5:41000,[fd00::5]:41000" and back; decode throws Failure(BRAID_ERR_BOOTSTRAP)
// quoting `what` when the text is malformed.
std::string encode_addresses(const std::vector<bs::HostPort> &addresses);
std::vector<bs::HostPort> decode_addresses(std::string_view text, const std::string &what);

// The out-of-band channel that carries rank 0's contact to the other ranks.
class ContactBoard {
 public:
  virtual ~ContactBoard() = default;
  // Rank 0 passes its contact, the others nullptr; every rank returns rank 0's contact.
  // Collective for boards that need it (PMIx's fence). Throws Failure naming the board.
  virtual RootContact share(const RootContact *mine) = 0;
  // Rank 0, once every rank has joined it: the board is needed no more. Best effort.
  virtual void formed() {}
};

// Forms the TCP bootstrap through `board`. base carries rank, size, timeout and (optionally)
// the job key; with new_key rank 0 makes a random key and publishes it with its addresses,
// and *job_key gets it on every rank. ifname is BRAID_SOCKET_IFNAME's value or nullptr.
// *root_address gets the address used.
std::unique_ptr<Bootstrap> form_through_board(BootstrapConfig base, ContactBoard &board,
                                              const char *ifname, bool new_key,
                                              std::string *root_address, std::string *job_key);

// 32 hex digits from /dev/urandom.
std::string random_job_key();

}  // namespace braid::detail
