// The star of connections through rank 0 that the bootstrap forms and, after init, the
// control plane keeps using.
#pragma once

#include <string>
#include <vector>

#include "bootstrap/socket.hpp"

namespace braid::detail::bs {

struct Star {
  Fd to_root;                      // ranks other than 0: the connection to rank 0
  std::vector<Fd> to_rank;         // rank 0: the connection to rank r at index r (0 unused)
  std::vector<std::string> hosts;  // every rank's hostname, as it reported it
};

}  // namespace braid::detail::bs
