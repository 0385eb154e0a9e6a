// Bruck alltoall: ceil(log2(n)) steps for any n, each moving about half the blocks, at the cost
// of packing and unpacking: the latency choice for small blocks. After a local rotation, in
// step k every block whose index has bit k set moves to rank + 2^k; at the end slot i holds the
// block rank - i sent to this rank.
#include <cstring>
#include <vector>

#include "alltoall/algorithms.hpp"

namespace braid::coll {

Task alltoall_bruck(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  const int r = ctx.rank();
  const size_t block = args.bytes();
  const auto *src = static_cast<const char *>(args.sendbuf);
  auto rot_lease = ctx.scratch(block * static_cast<size_t>(n));
  char *rot = rot_lease.data();
  for (int i = 0; i < n; ++i)
    std::memcpy(rot + static_cast<size_t>(i) * block,
                src + static_cast<size_t>((r + i) % n) * block, block);
  auto out_lease = ctx.scratch(block * static_cast<size_t>((n + 1) / 2));
  auto in_lease = ctx.scratch(block * static_cast<size_t>((n + 1) / 2));
  std::vector<int> moving;
  uint32_t step = 0;
  for (int k = 1; k < n; k <<= 1, ++step) {
    moving.clear();
    for (int i = 1; i < n; ++i)
      if (i & k) moving.push_back(i);
    for (size_t j = 0; j < moving.size(); ++j)
      std::memcpy(out_lease.data() + j * block, rot + static_cast<size_t>(moving[j]) * block,
                  block);
    const size_t bytes = moving.size() * block;
    ctx.recv((r - k + n) % n, in_lease.data(), bytes, step);
    ctx.send((r + k) % n, out_lease.data(), bytes, step);
    co_await ctx.wait_all();
    for (size_t j = 0; j < moving.size(); ++j)
      std::memcpy(rot + static_cast<size_t>(moving[j]) * block, in_lease.data() + j * block, block);
  }
  char *dst = static_cast<char *>(args.recvbuf);
  for (int i = 0; i < n; ++i)
    std::memcpy(dst + static_cast<size_t>((r - i + n) % n) * block,
                rot + static_cast<size_t>(i) * block, block);
}

}  // namespace braid::coll
