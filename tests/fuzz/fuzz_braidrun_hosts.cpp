// braidrun's --host lists ("a:2,b,c:4") and the rank placement over them.
#include <cstddef>
#include <cstdint>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

#include "hosts.hpp"

using namespace braidrun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const int ranks = 1 + data[0] % 64;
  const std::string text(reinterpret_cast<const char *>(data + 1), size - 1);
  // The same text as a hostfile, read through a memfd so nothing touches the disk.
  static const int fd = memfd_create("hostfile", 0);
  if (fd >= 0 && ftruncate(fd, 0) == 0 && pwrite(fd, text.data(), text.size(), 0) >= 0) {
    try {
      read_hostfile("/proc/self/fd/" + std::to_string(fd));
    } catch (const std::exception &) {
    }
  }
  std::string error;
  auto hosts = parse_host_list(text, &error);
  if (!hosts) return 0;
  try {
    auto placement = place_ranks(*hosts, ranks);
    if (placement.size() != static_cast<size_t>(ranks)) __builtin_trap();
  } catch (const std::exception &) {
  }
  return 0;
}
