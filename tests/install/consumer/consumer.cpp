// Install-test consumer (C++): the header-only C++ API over the installed libbraid.
// Exits non-zero on a wrong result or a braid::Error.
#include <braid/braid.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
  try {
    braid::Session session(argc, argv);
    braid::Comm world = session.world();
    const int rank = world.rank();
    const int size = world.size();
    int bad = 0;

    // In-place sum of doubles: rank r contributes r + 1 everywhere.
    std::vector<double> v(70000, rank + 1.0);
    world.allreduce(v, braid::Op::sum);
    const double sum = size * (size + 1) / 2.0;
    for (double x : v) bad += x != sum;

    // Non-blocking out-of-place min overlapping a broadcast from the last rank.
    std::vector<std::int32_t> in(1000, 10 - rank), out(1000);
    braid::Request req = world.iallreduce(in, out, braid::Op::min);
    std::vector<std::uint64_t> b(257, rank == size - 1 ? 0xb4a1dULL : 0ULL);
    world.broadcast(b, size - 1);
    req.wait();
    for (std::int32_t x : out) bad += x != 10 - (size - 1);
    for (std::uint64_t x : b) bad += x != 0xb4a1dULL;
    world.barrier();

    std::printf("consumer_cpp: rank %d of %d over %s: %s\n", rank, size,
                world.transport().c_str(), bad ? "WRONG" : "ok");
    return bad ? 1 : 0;
  } catch (const braid::Error &e) {
    std::fprintf(stderr, "consumer_cpp: braid error %d: %s\n", static_cast<int>(e.code()),
                 e.what());
    return 1;
  }
}
