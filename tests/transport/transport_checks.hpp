// The machinery of braid_transport_tests: the job (world, transport, peers), a batch of
// requests waited for together with a deadline that names the peer, and payload patterns.
#pragma once

#include <braid/transport.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace braid::detail {
struct World;
class Transport;
}  // namespace braid::detail

namespace braid::transport_test {

// A case's failure: the message names the case's step, the peer, the tag and the size.
struct CaseFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr unsigned char kSentinel = 0xa5;
constexpr size_t kSlack = 64;  // receive buffers are this much longer than the message

// A pattern seed for the message from `src` to `dst` with `tag`.
uint64_t seed(int src, int dst, uint64_t tag);
void fill(unsigned char *buf, size_t bytes, uint64_t seed);
// Throws CaseFailure naming the first wrong byte's offset and `what`.
void verify(const unsigned char *buf, size_t bytes, uint64_t seed, const std::string &what);
void verify_sentinel(const unsigned char *buf, size_t bytes, const std::string &what);

class Job {
 public:
  explicit Job(std::unique_ptr<detail::World> world);
  ~Job();
  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::vector<int> &peers() const { return peers_; }
  const braid_transport_props_t &props() const;
  detail::Transport &transport();
  double timeout_s() const { return timeout_s_; }
  void barrier();  // over the bootstrap network
  // Runs one case, prints PASS/FAIL with its time; false when it failed.
  bool run_case(const char *name, const std::function<void()> &body);

 private:
  std::unique_ptr<detail::World> world_;
  int rank_ = 0, size_ = 1;
  std::vector<int> peers_;
  double timeout_s_ = 60;
};

// Requests posted together and waited for together. Receives check the received length.
// Destroying a batch with requests still pending cancels them.
class Batch {
 public:
  Batch(Job &job, std::string what) : job_(job), what_(std::move(what)) {}
  ~Batch();
  void send(int peer, uint64_t tag, const void *buf, size_t bytes);
  void recv(int peer, uint64_t tag, void *buf, size_t capacity, size_t expect);
  void progress_for(std::chrono::milliseconds d);  // progresses and tests, waits for nothing
  void wait_all();  // throws CaseFailure at the deadline, naming the requests still pending

 private:
  struct Op {
    braid_transport_req_t req;
    int peer;
    uint64_t tag;
    size_t bytes;
    bool recv;
    bool done;
  };
  bool poll();  // true when every request is done
  Job &job_;
  std::string what_;
  std::vector<Op> ops_;
  size_t pending_ = 0;
};

// The transport's counter `name` on this rank; 0 when it has none by that name.
uint64_t counter(Job &job, const char *name);
// Whether the transport has a counter by that name (the verbs plugin's own ones).
bool has_counter(Job &job, const char *name);

// Creates the job from the environment (as braid_init does), prints the transport's
// properties and runs `cases`; returns the exit status. Failures of the setup itself exit 1.
int run_cases(const std::string &filter,
              const std::function<int(Job &, const std::string &)> &cases);

}  // namespace braid::transport_test
