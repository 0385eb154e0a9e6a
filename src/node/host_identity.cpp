#include "node/host_identity.hpp"

#include <unistd.h>

#include <fstream>
#include <vector>

namespace braid::detail {

std::string local_host_identity(const EnvLookup &env, int rank) {
  if (auto id = env("BRAID_HOST_ID"); id && !id->empty()) {
    std::vector<std::string> names{""};
    for (char c : *id) {
      if (c == ',')
        names.emplace_back();
      else
        names.back() += c;
    }
    return "override:" + names[static_cast<size_t>(rank) % names.size()];
  }
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
  std::string boot_id;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::getline(in, boot_id);
  return std::string(name) + "/" + boot_id;
}

}  // namespace braid::detail
