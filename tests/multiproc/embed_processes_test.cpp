// Unique ids without braidrun or PMIx: this test process makes an id and starts its ranks
// itself (as a framework with its own launcher does), handing them the id on the command line;
// and an id whose creator has exited fails within BRAID_TIMEOUT, naming the address.
#include <arpa/inet.h>
#include <braid/braid.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

#if defined(__SANITIZE_ADDRESS__)
// LeakSanitizer's exit-time check stops every thread it knows of, and in a child forked from a
// threaded process those threads are not there: the check hangs. Leaks are checked in the
// parent and in the ranks it spawns; the forked child of AForkedChildThatExits... is spared.
static const pid_t g_first_pid = getpid();
extern "C" int __lsan_is_turned_off() {
  return getpid() != g_first_pid ? 1 : 0;
}
#endif

namespace {

std::string g_self;  // this executable, to start ranks as

std::string to_hex(const braid_unique_id_t &id) {
  std::string out;
  char byte[3];
  for (char c : id.internal) {
    std::snprintf(byte, sizeof byte, "%02x", static_cast<unsigned char>(c));
    out += byte;
  }
  return out;
}

braid_unique_id_t from_hex(const char *text) {
  braid_unique_id_t id{};
  for (size_t i = 0; i < sizeof id.internal && text[2 * i] && text[2 * i + 1]; ++i)
    id.internal[i] = static_cast<char>(std::stoi(std::string(text + 2 * i, 2), nullptr, 16));
  return id;
}

// A rank: forms the group, runs collectives, checks them, and leaves the group and two
// communicators made from it to braid_finalize; exit 0 when all is right.
int rank_main(const char *hex, int nranks, int rank) {
  braid_comm_t g = nullptr;
  if (braid_comm_init_rank(&g, nranks, from_hex(hex), rank) != BRAID_SUCCESS) {
    std::fprintf(stderr, "rank %d: init_rank: %s\n", rank, braid_last_error());
    return 1;
  }
  std::vector<double> v(5000, rank + 1.0);
  int bad =
      braid_allreduce(v.data(), v.data(), v.size(), BRAID_FLOAT64, BRAID_SUM, g) != BRAID_SUCCESS ||
              v[4999] != nranks * (nranks + 1) / 2.0
          ? 1
          : 0;
  int32_t root_value = rank == nranks - 1 ? 42 : 0;
  bad |= braid_broadcast(&root_value, 1, BRAID_INT32, nranks - 1, g) != BRAID_SUCCESS ||
         root_value != 42;
  bad |= braid_barrier(g) != BRAID_SUCCESS;
  // Communicators made from the group and left alive, as a program that exits without freeing
  // them does: braid_finalize frees them, and their handles are dead after it.
  braid_comm_t dup = nullptr, half = nullptr;
  bad |= braid_comm_dup(g, &dup) != BRAID_SUCCESS;
  bad |= braid_comm_split(g, rank % 2, -rank, &half) != BRAID_SUCCESS;
  int32_t one = 1;
  bad |=
      braid_allreduce(&one, &one, 1, BRAID_INT32, BRAID_SUM, dup) != BRAID_SUCCESS || one != nranks;
  if (bad) std::fprintf(stderr, "rank %d: wrong result: %s\n", rank, braid_last_error());
  // A request left open on a communicator braid_finalize frees: waited for afterwards, it
  // reports how it ended and is released.
  static int32_t left_open[1 << 14];
  braid_request_t open_req = nullptr;
  bad |= braid_iallreduce(left_open, left_open, 1 << 14, BRAID_INT32, BRAID_SUM, dup, &open_req) !=
         BRAID_SUCCESS;
  if (braid_finalize() != BRAID_SUCCESS) {
    std::fprintf(stderr, "rank %d: braid_finalize: %s\n", rank, braid_last_error());
    return 1;
  }
  if (braid_comm_size(g) != -1 || braid_comm_size(dup) != -1 || braid_comm_size(half) != -1 ||
      braid_barrier(dup) != BRAID_ERR_INVALID_ARGUMENT) {
    std::fprintf(stderr, "rank %d: a communicator outlived braid_finalize\n", rank);
    return 1;
  }
  const braid_result_t open_rc = braid_wait(&open_req);
  if (open_req != nullptr || (open_rc != BRAID_SUCCESS && open_rc != BRAID_ERR_INVALID_ARGUMENT)) {
    std::fprintf(stderr, "rank %d: the request left open: braid_wait gave %d (%s), request %s\n",
                 rank, open_rc, braid_last_error(), open_req ? "kept" : "released");
    return 1;
  }
  return bad ? 1 : 0;
}

// One process holds ranks 0 and 1 of one group, a thread each (as a program driving several
// devices does), and leaves both in one braid_finalize: each rank's leave waits for the other,
// so both must be said before either is waited for. Exit 0 when finalize came back well
// within BRAID_TIMEOUT (20 s, set by the test).
int two_ranks_main() {
  braid_unique_id_t id{};
  if (braid_get_unique_id(&id) != BRAID_SUCCESS) return 1;
  braid_comm_t g[2] = {nullptr, nullptr};
  int bad[2] = {1, 1};
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      if (braid_comm_init_rank(&g[r], 2, id, r) != BRAID_SUCCESS) return;
      int32_t x = r + 1;
      bad[r] = braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, g[r]) != BRAID_SUCCESS || x != 3;
    });
  for (std::thread &t : threads) t.join();
  if (bad[0] || bad[1]) {
    std::fprintf(stderr, "two ranks in one process: the group failed: %s\n", braid_last_error());
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const braid_result_t rc = braid_finalize();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ embed ] finalize of two ranks of one group in one process: %.3f s\n", took);
  if (rc != BRAID_SUCCESS || took > 10.0) {
    std::fprintf(stderr, "braid_finalize gave %d after %.1f s (BRAID_TIMEOUT=20): %s\n", rc, took,
                 braid_last_error());
    return 1;
  }
  return 0;
}

pid_t start(const std::vector<std::string> &args) {
  std::vector<char *> argv;
  for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, g_self.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Starts ranks 0..n-1 of a group of n formed from `id`, each a process of its own (rank_main).
std::vector<pid_t> start_group(const braid_unique_id_t &id, int n) {
  std::vector<pid_t> ranks;
  for (int r = 0; r < n; ++r)
    ranks.push_back(start({g_self, "--rank", to_hex(id), std::to_string(n), std::to_string(r)}));
  return ranks;
}

// Waits for every rank, each of which must have started and must exit with `code`.
void expect_exits(const std::vector<pid_t> &ranks, int code) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    ASSERT_GT(ranks[r], 0) << "rank " << r << " did not start";
    EXPECT_EQ(wait_for(ranks[r]), code) << "rank " << r;
  }
}

TEST(EmbedProcesses, RanksStartedByTheApplicationFormAGroup) {
  // No braid environment: these processes know nothing but the id and their rank.
  unsetenv("BRAID_RANK");
  unsetenv("BRAID_SIZE");
  braid_unique_id_t id{};
  ASSERT_EQ(braid_get_unique_id(&id), BRAID_SUCCESS) << braid_last_error();
  expect_exits(start_group(id, 3), 0);
}

TEST(EmbedProcesses, TwoRanksOfAGroupInOneProcessFinalizeTogether) {
  unsetenv("BRAID_RANK");
  unsetenv("BRAID_SIZE");
  setenv("BRAID_TIMEOUT", "20", 1);
  const pid_t child = start({g_self, "--two-ranks"});
  unsetenv("BRAID_TIMEOUT");
  ASSERT_GT(child, 0);
  EXPECT_EQ(wait_for(child), 0);
}

// A launcher that makes the id and then forks (Python's multiprocessing does): the child
// inherits the id's service, not its thread. A child that exits must neither wait for that
// thread nor stop the parent's service.
TEST(EmbedProcesses, AForkedChildThatExitsLeavesTheIdServing) {
  unsetenv("BRAID_RANK");
  unsetenv("BRAID_SIZE");
  braid_unique_id_t id{};
  ASSERT_EQ(braid_get_unique_id(&id), BRAID_SUCCESS) << braid_last_error();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) std::exit(0);  // exit-time destructors run, as in any child that returns
  int status = -1;
  for (int i = 0; i < 100 && waitpid(child, &status, WNOHANG) == 0; ++i) usleep(50 * 1000);
  if (waitpid(child, &status, WNOHANG) == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    FAIL() << "the forked child did not exit within 5 s";
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  setenv("BRAID_TIMEOUT", "20", 1);
  const std::vector<pid_t> ranks = start_group(id, 2);
  unsetenv("BRAID_TIMEOUT");
  expect_exits(ranks, 0);
}

// Ranks that disagree on nranks: both fail at once (rank 0 naming both sizes), not at
// BRAID_TIMEOUT.
TEST(EmbedProcesses, RanksThatDisagreeOnTheSizeFailAtOnce) {
  unsetenv("BRAID_RANK");
  unsetenv("BRAID_SIZE");
  braid_unique_id_t id{};
  ASSERT_EQ(braid_get_unique_id(&id), BRAID_SUCCESS) << braid_last_error();
  setenv("BRAID_TIMEOUT", "30", 1);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t rank0 = start({g_self, "--rank", to_hex(id), "2", "0"});
  const pid_t rank1 = start({g_self, "--rank", to_hex(id), "3", "1"});
  unsetenv("BRAID_TIMEOUT");
  ASSERT_GT(rank0, 0);
  ASSERT_GT(rank1, 0);
  EXPECT_EQ(wait_for(rank0), 1);
  EXPECT_EQ(wait_for(rank1), 1);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 15.0) << "a rank waited for BRAID_TIMEOUT (30 s)";
}

// Rank 0 cannot choose an address to publish: the others learn why from the id's service at
// once, instead of waiting out BRAID_TIMEOUT for a rank 0 that never registers.
TEST(EmbedProcesses, ARankZeroThatCannotListenFailsTheOthersAtOnce) {
  unsetenv("BRAID_RANK");
  unsetenv("BRAID_SIZE");
  braid_unique_id_t id{};
  ASSERT_EQ(braid_get_unique_id(&id), BRAID_SUCCESS) << braid_last_error();
  setenv("BRAID_TIMEOUT", "30", 1);
  setenv("BRAID_SOCKET_IFNAME", "nosuchif0", 1);  // after the id: only the ranks choose
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<pid_t> ranks = start_group(id, 3);
  unsetenv("BRAID_SOCKET_IFNAME");
  unsetenv("BRAID_TIMEOUT");
  expect_exits(ranks, 1);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 15.0) << "a rank waited for BRAID_TIMEOUT (30 s)";
}

// A launcher's variables left in the environment, even a partial set that braid_init would
// refuse, describe another job: the group's place comes from the arguments alone.
TEST(EmbedProcesses, ALaunchersLeftoverVariablesDoNotMatter) {
  unsetenv("BRAID_RANK");
  setenv("BRAID_SIZE", "4", 1);
  setenv("BRAID_LOCAL_SIZE", "9", 1);
  braid_unique_id_t id{};
  ASSERT_EQ(braid_get_unique_id(&id), BRAID_SUCCESS) << braid_last_error();
  const std::vector<pid_t> ranks = start_group(id, 2);
  unsetenv("BRAID_SIZE");
  unsetenv("BRAID_LOCAL_SIZE");
  expect_exits(ranks, 0);
}

// How many descriptors and threads this process holds.
size_t entries_in(const char *dir) {
  size_t n = 0;
  if (DIR *d = opendir(dir)) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

TEST(EmbedProcesses, AnIdServesOneGroup) {
  unsetenv("BRAID_RANK");
  unsetenv("BRAID_SIZE");
  // Made and used several times over, as a program that rebuilds its communicators does: the
  // services whose groups formed give back their port, descriptors and thread.
  braid_unique_id_t id{};
  ASSERT_EQ(braid_get_unique_id(&id), BRAID_SUCCESS) << braid_last_error();
  const size_t fds = entries_in("/proc/self/fd"), threads = entries_in("/proc/self/task");
  for (int round = 0; round < 4; ++round) {
    if (round > 0) {
      ASSERT_EQ(braid_get_unique_id(&id), BRAID_SUCCESS) << braid_last_error();
    }
    // Round 2 is a one-rank group, which never registers an address: it too says "formed".
    ASSERT_NO_FATAL_FAILURE(expect_exits(start_group(id, round == 2 ? 1 : 2), 0));
  }
  // The last service's thread ends soon after its group said "formed" (up to 5 s allowed);
  // the next id lets it go. Then one service (next's) is left, as the first id's was: nothing
  // piles up.
  for (int tries = 0; tries < 50 && entries_in("/proc/self/task") >= threads; ++tries)
    usleep(100 * 1000);
  braid_unique_id_t next{};
  ASSERT_EQ(braid_get_unique_id(&next), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(entries_in("/proc/self/fd"), fds);
  EXPECT_EQ(entries_in("/proc/self/task"), threads);
  // The id's group formed, so its service is gone: a second group's ranks are told at once,
  // not after BRAID_TIMEOUT.
  setenv("BRAID_TIMEOUT", "30", 1);
  for (int rank : {0, 1}) {
    const auto t0 = std::chrono::steady_clock::now();
    braid_comm_t g = nullptr;
    EXPECT_EQ(braid_comm_init_rank(&g, 2, id, rank), BRAID_ERR_BOOTSTRAP);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(g, nullptr);
    const std::string why = braid_last_error();
    EXPECT_NE(why.find("is not there (connection refused)"), std::string::npos) << why;
    EXPECT_NE(why.find("an id serves one group"), std::string::npos) << why;
    EXPECT_LT(took, 15.0) << why;
    std::printf("[ embed ] an id used again, rank %d: %s after %.2f s\n", rank, why.c_str(), took);
  }
  unsetenv("BRAID_TIMEOUT");
}

// The port of the id's rendezvous service: the id holds the service's addresses as text after
// a length byte at offset 41 (src/api/unique_id.cpp), "host:port[,host:port...]".
int service_port(const braid_unique_id_t &id) {
  const std::string text(id.internal + 42, static_cast<unsigned char>(id.internal[41]));
  const std::string first = text.substr(0, text.find(','));
  return std::atoi(first.substr(first.rfind(':') + 1).c_str());
}

// Connections that never send a request (a port scanner, a hostile host) fill the service's
// table; ranks that connect meanwhile must still be served, not turned away, and the service
// must not spin.
TEST(EmbedProcesses, AFloodOfSilentConnectionsDoesNotKeepTheGroupFromForming) {
  unsetenv("BRAID_RANK");
  unsetenv("BRAID_SIZE");
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  files.rlim_cur = std::min<rlim_t>(files.rlim_max, 8192);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &files), 0);
  ASSERT_GE(files.rlim_cur, rlim_t{2600}) << "needs file descriptors for 1100 connections twice";
  braid_unique_id_t id{};
  ASSERT_EQ(braid_get_unique_id(&id), BRAID_SUCCESS) << braid_last_error();
  const int port = service_port(id);
  ASSERT_GT(port, 0);
  std::vector<int> flood;
  for (int i = 0; i < 1100; ++i) {  // more than the service holds (1024)
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof to), 0) << std::strerror(errno);
    flood.push_back(fd);
  }
  usleep(300 * 1000);  // the service has accepted them (and dropped the oldest to make room)
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  expect_exits(start_group(id, 2), 0);
  getrusage(RUSAGE_SELF, &after);
  for (int fd : flood) close(fd);
  const auto seconds = [](const rusage &u) {
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  std::printf(
      "[ embed ] the group formed through 1100 silent connections; this process used "
      "%.2f s of CPU meanwhile\n",
      seconds(after) - seconds(before));
}

TEST(EmbedProcesses, AStaleIdFailsWithinTheTimeout) {
  // The id's creator exits at once: its rendezvous service is gone.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  std::vector<std::string> args = {g_self, "--make-id"};
  std::vector<char *> argv = {args[0].data(), args[1].data(), nullptr};
  pid_t maker = -1;
  ASSERT_EQ(posix_spawn(&maker, g_self.c_str(), &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  char hex[2 * sizeof(braid_unique_id_t) + 1] = {};
  size_t got = 0;
  while (got < sizeof hex - 1) {
    const ssize_t r = read(pipe_fds[0], hex + got, sizeof hex - 1 - got);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  close(pipe_fds[0]);
  ASSERT_EQ(wait_for(maker), 0);
  ASSERT_EQ(got, sizeof hex - 1);
  setenv("BRAID_TIMEOUT", "2", 1);
  const auto t0 = std::chrono::steady_clock::now();
  braid_comm_t g = nullptr;
  EXPECT_EQ(braid_comm_init_rank(&g, 2, from_hex(hex), 1), BRAID_ERR_BOOTSTRAP);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  unsetenv("BRAID_TIMEOUT");
  EXPECT_EQ(g, nullptr);
  const std::string why = braid_last_error();
  EXPECT_NE(why.find("rendezvous"), std::string::npos) << why;
  EXPECT_LT(took, 10.0) << why;  // BRAID_TIMEOUT=2, not braid's default of 300 s
  std::printf("[ embed ] stale id: %s after %.2f s (BRAID_TIMEOUT=2)\n", why.c_str(), took);
}

}  // namespace

int main(int argc, char **argv) {
  g_self = argv[0];
  if (argc == 5 && std::strcmp(argv[1], "--rank") == 0)
    return rank_main(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  if (argc == 2 && std::strcmp(argv[1], "--two-ranks") == 0) return two_ranks_main();
  if (argc == 2 && std::strcmp(argv[1], "--make-id") == 0) {
    braid_unique_id_t id{};
    if (braid_get_unique_id(&id) != BRAID_SUCCESS) return 1;
    std::fputs(to_hex(id).c_str(), stdout);
    return 0;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
