// NUMA placement checked on the real kernel, rank by rank: run under braidrun (--bind-to numa in
// the 2-node qemu guest; any binding on a 1-node host). move_pages(2) reports where each page
// of a buffer actually is; /proc/self/numa_maps shows braid's internal (scratch) mappings and
// their pages per node. On a 1-node machine the same checks hold with everything on node 0.
#include <braid/braid.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <braid/braid.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

braid_comm_t g_world = nullptr;

std::vector<int> sys_nodes() {
  std::vector<int> out;
  for (int n = 0; n < 64; ++n)
    if (std::ifstream(("/sys/devices/system/node/node" + std::to_string(n) + "/cpulist").c_str()))
      out.push_back(n);
  return out.empty() ? std::vector<int>{0} : out;
}

// "0-1,4" -> {0,1,4}
std::set<int> parse_list(const std::string &text) {
  std::set<int> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty() || part == "\n") continue;
    const auto dash = part.find('-');
    const int lo = std::atoi(part.c_str());
    const int hi = dash == std::string::npos ? lo : std::atoi(part.c_str() + dash + 1);
    for (int i = lo; i <= hi; ++i) out.insert(i);
  }
  return out;
}

std::set<int> node_cpus(int node) {
  std::ifstream f("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist");
  std::string line;
  std::getline(f, line);
  return parse_list(line);
}

std::set<int> my_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  std::set<int> out;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) out.insert(i);
  return out;
}

// The node of every page of [p, p+bytes) (touched first so each page exists), via move_pages
// with nodes == NULL (query only).
std::set<int> page_nodes(void *p, size_t bytes) {
  const long page = sysconf(_SC_PAGESIZE);
  std::memset(p, 1, bytes);
  std::vector<void *> pages;
  for (size_t off = 0; off < bytes; off += static_cast<size_t>(page))
    pages.push_back(static_cast<char *>(p) + off);
  std::vector<int> status(pages.size(), -1);
  const long rc = syscall(SYS_move_pages, 0, pages.size(), pages.data(), nullptr, status.data(), 0);
  EXPECT_EQ(rc, 0) << "move_pages: " << std::strerror(errno);
  return std::set<int>(status.begin(), status.end());
}

int expected_node() {
  const auto nodes = sys_nodes();
  if (nodes.size() == 1) return 0;
  // braidrun --bind-to numa: local rank i on node i mod nodes.
  const char *lr = std::getenv("BRAID_LOCAL_RANK");
  return nodes[static_cast<size_t>(lr ? std::atoi(lr) : 0) % nodes.size()];
}

void note_single_node() {
  if (sys_nodes().size() == 1)
    std::printf("[rank %d] 1 NUMA node: everything is node 0\n", braid_comm_rank(g_world));
}

TEST(NumaBinding, RankIsInsideItsNodeCpuset) {
  note_single_node();
  const int node = expected_node();
  EXPECT_EQ(braid_comm_numa_node(g_world), node);
  const auto mine = my_cpus();
  const auto allowed = node_cpus(node);
  ASSERT_FALSE(mine.empty());
  for (int cpu : mine) EXPECT_TRUE(allowed.count(cpu)) << "cpu " << cpu << " not in node " << node;
}

TEST(NumaPages, LocalAllocationLandsOnTheRanksNode) {
  void *p = nullptr;
  const size_t bytes = 4u << 20;
  ASSERT_EQ(braid_mem_alloc(bytes, BRAID_NUMA_LOCAL, &p), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(page_nodes(p, bytes), std::set<int>{expected_node()});
  EXPECT_EQ(braid_mem_free(p), BRAID_SUCCESS);
}

TEST(NumaPages, ExplicitAllocationLandsOnEachNodeAsked) {
  for (int node : sys_nodes()) {
    void *p = nullptr;
    const size_t bytes = 1u << 20;
    ASSERT_EQ(braid_mem_alloc(bytes, node, &p), BRAID_SUCCESS) << braid_last_error();
    EXPECT_EQ(page_nodes(p, bytes), std::set<int>{node}) << "asked for node " << node;
    EXPECT_EQ(braid_mem_free(p), BRAID_SUCCESS);
  }
}

TEST(NumaPages, NonexistentNodeIsRefusedNamingTheNodes) {
  void *p = reinterpret_cast<void *>(1);
  EXPECT_EQ(braid_mem_alloc(4096, 63, &p), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr);
  std::string nodes;
  for (int n : sys_nodes()) nodes += (nodes.empty() ? "" : ", ") + std::to_string(n);
  EXPECT_NE(std::string(braid_last_error()).find("the nodes are: " + nodes), std::string::npos)
      << braid_last_error();
}

// braid's scratch mappings are the ones with a bind policy that are not the test's own buffers:
// every page of them must be on the rank's node.
TEST(NumaPages, InternalScratchBuffersAreOnTheRanksNode) {
  if (braid_comm_size(g_world) < 2) GTEST_SKIP() << "one rank does not use scratch";
  const int node = expected_node();
  std::vector<float> v(1u << 20, 1.0f);  // 4 MiB: recursive doubling uses a 4 MiB scratch
  ASSERT_EQ(braid_allreduce(v.data(), v.data(), v.size(), BRAID_FLOAT32, BRAID_SUM, g_world),
            BRAID_SUCCESS)
      << braid_last_error();
  std::ifstream maps("/proc/self/numa_maps");
  std::string line;
  int scratch = 0;
  while (std::getline(maps, line)) {
    if (line.find(" bind:") == std::string::npos || line.find(" anon=") == std::string::npos)
      continue;
    ++scratch;
    EXPECT_NE(line.find(" bind:" + std::to_string(node) + " "), std::string::npos) << line;
    for (int other : sys_nodes()) {
      if (other != node) {
        EXPECT_EQ(line.find(" N" + std::to_string(other) + "="), std::string::npos) << line;
      }
    }
  }
  // Without binding support (containers forbidding mbind) there is no bind policy to see.
  if (sys_nodes().size() > 1) {
    EXPECT_GE(scratch, 1) << "no bound scratch mapping found";
  }
}

// The node-local shared-memory segment: this rank's part (its windows) is bound to its node
// (node/placement.cpp), so /proc/self/numa_maps shows a range of the segment's mapping with
// this rank's bind policy whose pages are all on that node.
TEST(NumaPages, NodeSegmentPartIsOnTheRanksNode) {
  if (braid_comm_size(g_world) < 2) GTEST_SKIP() << "one rank has no node segment";
  if (sys_nodes().size() < 2) GTEST_SKIP() << "1 NUMA node: nothing to bind";
  const int node = expected_node();
  std::ifstream maps("/proc/self/numa_maps");
  std::string line;
  int mine = 0;
  while (std::getline(maps, line)) {
    if (line.find("/braid-") == std::string::npos || line.find("-node-") == std::string::npos)
      continue;
    // numa_maps shows a mapping's policy at the start of each of its ranges, and the pages of
    // the whole range: the range holding the control lines (bound by the leader) also holds
    // other ranks' parts, so only a range with no page elsewhere counts.
    if (line.find(" bind:" + std::to_string(node) + " ") == std::string::npos) continue;
    bool elsewhere = false;
    for (int other : sys_nodes())
      elsewhere = elsewhere || (other != node &&
                                line.find(" N" + std::to_string(other) + "=") != std::string::npos);
    if (!elsewhere && line.find(" N" + std::to_string(node) + "=") != std::string::npos) ++mine;
  }
  EXPECT_GE(mine, 1) << "no range of the node segment is bound to node " << node;
}

// Allreduce stays correct with send/receive buffers on the local and on a remote node (and with
// the C++ allocator), every algorithm forced in turn.
TEST(NumaCollectives, AllreduceOnLocalAndRemoteNodeBuffers) {
  const int size = braid_comm_size(g_world);
  const int rank = braid_comm_rank(g_world);
  const auto nodes = sys_nodes();
  const int remote = nodes[(static_cast<size_t>(expected_node()) + 1) % nodes.size()];
  for (int node : {BRAID_NUMA_LOCAL, remote}) {
    const size_t count = (1u << 18) + 3;  // ragged, so segments split unevenly
    float *send = nullptr;
    float *recv = nullptr;
    ASSERT_EQ(braid_mem_alloc(count * sizeof(float), node, reinterpret_cast<void **>(&send)),
              BRAID_SUCCESS);
    ASSERT_EQ(braid_mem_alloc(count * sizeof(float), node, reinterpret_cast<void **>(&recv)),
              BRAID_SUCCESS);
    for (int round = 0; round < 3; ++round) {  // reuses the one registration of each buffer
      for (size_t i = 0; i < count; ++i) send[i] = static_cast<float>((rank + 1) * (i % 7 + round));
      ASSERT_EQ(braid_allreduce(send, recv, count, BRAID_FLOAT32, BRAID_SUM, g_world),
                BRAID_SUCCESS)
          << braid_last_error();
      const float ranks_sum = static_cast<float>(size * (size + 1) / 2);
      for (size_t i = 0; i < count; i += 997)
        ASSERT_EQ(recv[i], ranks_sum * static_cast<float>(i % 7 + round)) << "node " << node;
      ASSERT_EQ(braid_broadcast(recv, count, BRAID_FLOAT32, size - 1, g_world), BRAID_SUCCESS);
    }
    EXPECT_EQ(braid_mem_free(send), BRAID_SUCCESS);
    EXPECT_EQ(braid_mem_free(recv), BRAID_SUCCESS);
  }
  braid::numa_vector<double> v(100000, static_cast<double>(rank));
  braid::Comm(g_world).allreduce(v, braid::Op::max);
  EXPECT_EQ(v[12345], static_cast<double>(size - 1));
}

}  // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (braid_init(&argc, &argv, &g_world) != BRAID_SUCCESS) {
    std::fprintf(stderr, "braid_init: %s\n", braid_last_error());
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  braid_finalize();
  return rc;
}
