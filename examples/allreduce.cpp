// The same as allreduce.c with the C++ API: RAII session, std::vector buffers, exceptions.
// Run: braidrun -n 4 ./allreduce_cpp
#include <braid/braid.hpp>
#include <cstdio>
#include <vector>

int main() {
  try {
    braid::Session session;
    braid::Comm world = session.world();

    std::vector<double> v(1 << 20, world.rank() + 1.0);
    world.allreduce(v, braid::Op::sum);  // in place

    std::vector<double> out(v.size());
    braid::Request max = world.iallreduce(v, out, braid::Op::max);  // overlaps with ...
    std::vector<int> answer{world.rank() == 0 ? 42 : 0};
    world.broadcast(answer, 0);  // ... this broadcast
    max.wait();

    const double expected = world.size() * (world.size() + 1) / 2.0;
    std::printf("rank %d of %d over %s: sum = %g (expected %g), max = %g, broadcast = %d\n",
                world.rank(), world.size(), world.transport().c_str(), v.back(), expected,
                out.back(), answer[0]);
    return v.front() == expected && out.back() == expected && answer[0] == 42 ? 0 : 1;
  } catch (const braid::Error &e) {
    std::fprintf(stderr, "braid error %d: %s\n", static_cast<int>(e.code()), e.what());
    return 1;
  }
}
