// Source 2: PMIx, for processes started by a PMIx server (Open MPI's mpirun, srun --mpi=pmix).
// The rank comes from PMIx_Init and the job's shape from the job info (PMIx_Get(PMIX_RANK)
// answers NOT-FOUND under both launchers, and PMIx_Get(NULL, PMIX_RANK) blocks). Rank 0's
// bootstrap address and a fresh job key travel by PMIx_Put, PMIx_Commit and a PMIx_Fence that
// collects the data; then PMIx is finalized, because braid needs nothing more from it.
// Built only when libpmix was found (see pmix_unavailable.cpp for the other case).
#include <pmix.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include "error.hpp"
#include "job/root_contact.hpp"
#include "job/sources.hpp"
#include "log.hpp"

namespace braid::detail {
namespace {

constexpr const char *kAddressKey = "braid.bootstrap";
constexpr const char *kJobKeyKey = "braid.job_key";

// What a PMIx call returned, with the value of a Get already copied out of PMIx's memory.
struct Outcome {
  bool answered = false;  // false: no answer before the deadline
  pmix_status_t status = PMIX_SUCCESS;
  uint64_t number = 0;
  std::string text;
  pmix_proc_t proc{};  // PMIx_Init's
};

// The longest wait braid takes for BRAID_TIMEOUT (as bs::Deadline): beyond it, a wait's
// conversion to the clock's nanoseconds would overflow.
constexpr double kLongestWaitS = 1e8;

// What PMIX_TIMEOUT asks of the server: whole seconds, at least timeout_s.
int server_seconds(double timeout_s) {
  return static_cast<int>(std::ceil(std::min(timeout_s, kLongestWaitS)));
}

// Where the server was given PMIX_TIMEOUT, the client waits this much longer, so that the
// server's own timeout comes back first: an answered call leaves PMIx in a state to finalize,
// an abandoned one does not (and Open MPI's mpirun reports a rank that exits unfinalized as
// having died improperly, over braid's message).
constexpr double kServerGraceS = 2;

// Runs one PMIx call on a helper thread and waits for it at most timeout_s. PMIx_Init has no
// timeout of its own and a server may ignore PMIX_TIMEOUT, yet every wait in braid must end.
// A call that outlives its deadline is abandoned: its thread holds the shared state, and the
// caller fails (the process is then leaving the job anyway).
Outcome call_bounded(double timeout_s, std::function<Outcome()> call) {
  timeout_s = std::min(timeout_s, kLongestWaitS + kServerGraceS);
  struct Shared {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    Outcome outcome;
  };
  auto shared = std::make_shared<Shared>();
  std::thread([shared, call = std::move(call)] {
    Outcome outcome = call();
    outcome.answered = true;
    std::lock_guard lock(shared->mutex);
    shared->outcome = std::move(outcome);
    shared->done = true;
    shared->done_cv.notify_all();
  }).detach();
  std::unique_lock lock(shared->mutex);
  if (!shared->done_cv.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                [&] { return shared->done; }))
    return Outcome{};
  return shared->outcome;
}

// Copies a Get's value out (integers of any width, or a string) and releases it.
Outcome take_value(pmix_status_t status, pmix_value_t *value) {
  Outcome out;
  out.status = status;
  if (status != PMIX_SUCCESS || value == nullptr) return out;
  switch (value->type) {
    case PMIX_UINT8:
      out.number = value->data.uint8;
      break;
    case PMIX_UINT16:
      out.number = value->data.uint16;
      break;
    case PMIX_UINT32:
      out.number = value->data.uint32;
      break;
    case PMIX_UINT64:
      out.number = value->data.uint64;
      break;
    case PMIX_SIZE:
      out.number = value->data.size;
      break;
    case PMIX_PROC_RANK:
      out.number = value->data.rank;
      break;
    case PMIX_STRING:
      out.text = value->data.string ? value->data.string : "";
      break;
    default:
      out.status = PMIX_ERR_TYPE_MISMATCH;
  }
  PMIX_VALUE_RELEASE(value);
  return out;
}

class PmixJob final : public JobSource {
 public:
  PmixJob(const EnvConfig &base, std::string launcher, std::optional<std::string> ifname)
      : JobSource(base, ""), launcher_(std::move(launcher)), ifname_(std::move(ifname)) {}

  ~PmixJob() override { finalize(); }

  // Not in the constructor: when it throws, the destructor must still finalize PMIx (Open
  // MPI's mpirun treats a process that initialized PMIx and exits without finalizing as
  // having died improperly, which would hide braid's own message).
  void start() {
    const double t = config_.timeout_s;
    // The call fills its own Outcome, never this object: after a timeout it may still run.
    Outcome init = call_bounded(t, [] {
      Outcome o;
      o.status = PMIx_Init(&o.proc, nullptr, 0);
      return o;
    });
    check("PMIx_Init", init, "connecting to the PMIx server");
    initialized_ = true;
    self_ = init.proc;
    nspace_ = self_.nspace;
    config_.rank = static_cast<int>(self_.rank);
    context_ = cat(launcher_, ", namespace ", nspace_, ", rank ", config_.rank);

    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, self_.nspace, PMIX_RANK_WILDCARD);
    config_.size = static_cast<int>(get_number(job, PMIX_JOB_SIZE, "PMIX_JOB_SIZE"));
    config_.local_rank = static_cast<int>(get_number(self_, PMIX_LOCAL_RANK, "PMIX_LOCAL_RANK"));
    config_.local_size = static_cast<int>(get_number(job, PMIX_LOCAL_SIZE, "PMIX_LOCAL_SIZE"));
    if (config_.size < 1 || config_.rank >= config_.size || config_.local_size < 1 ||
        config_.local_rank >= config_.local_size)
      fail(BRAID_ERR_BOOTSTRAP, "PMIx job info is inconsistent (", context_, "): rank ",
           config_.rank, " of ", config_.size, ", local rank ", config_.local_rank, " of ",
           config_.local_size);
    config_.launched = true;
    std::string version = PMIx_Get_version();  // "OpenPMIx 4.2.2rc2 (PMIx Standard: ...)"
    version.resize(std::min(version.size(), version.find(" (")));
    name_ = cat("PMIx (", launcher_, ", namespace ", nspace_, ", ", version, ")");
  }

  std::unique_ptr<Bootstrap> form_bootstrap() override {
    const EnvConfig &c = config_;
    BootstrapConfig bc{c.rank, c.size, "", 0, "", c.timeout_s};
    std::unique_ptr<Bootstrap> bootstrap;
    if (c.size == 1) {
      bootstrap = make_tcp_bootstrap(bc);
    } else {
      Board board(*this);
      // The key rank 0 made names the job's node segments too (config().job_key).
      bootstrap = form_through_board(bc, board, ifname_ ? ifname_->c_str() : nullptr, true,
                                     &root_address_, &config_.job_key);
    }
    finalize();
    return bootstrap;
  }

 private:
  // PMIx as a ContactBoard: rank 0 puts, everyone commits and fences, the others get. Where
  // rank 0 failed, its address key carries kFailed and its reason instead of addresses.
  class Board final : public ContactBoard {
   public:
    static constexpr std::string_view kFailed = "failed: ";
    explicit Board(PmixJob &job) : job_(job) {}
    RootContact share(const RootContact *mine) override {
      if (mine) {
        job_.put(kAddressKey, mine->failure.empty() ? encode_addresses(mine->addresses)
                                                    : cat(kFailed, mine->failure));
        job_.put(kJobKeyKey, mine->job_key);
      }
      job_.commit_and_fence();
      if (mine) return *mine;
      pmix_proc_t root;
      PMIX_LOAD_PROCID(&root, job_.self_.nspace, 0);
      const std::string published = job_.get_string(root, kAddressKey);
      if (published.starts_with(kFailed))
        fail(BRAID_ERR_BOOTSTRAP, "rank ", job_.config_.rank,
             ": rank 0 failed before it could publish its bootstrap address (",
             std::string_view(published).substr(kFailed.size()), ")");
      RootContact contact;
      contact.addresses = decode_addresses(published, cat("rank 0's ", kAddressKey, " from PMIx"));
      contact.job_key = job_.get_string(root, kJobKeyKey);
      return contact;
    }

   private:
    PmixJob &job_;
  };

  [[noreturn]] void fail_call(const char *call, const Outcome &o, const std::string &doing) {
    if (!o.answered) abandoned_ = true;  // a call may still be running: never finalize
    const std::string where = context_.empty() ? "started by " + launcher_ : context_;
    if (!o.answered)
      fail(BRAID_ERR_BOOTSTRAP, call, " failed: no answer within ", config_.timeout_s,
           " s (BRAID_TIMEOUT) while ", doing, " (", where, ")");
    fail(BRAID_ERR_BOOTSTRAP, call, " failed: ", PMIx_Error_string(o.status), " (", o.status,
         ") while ", doing, " (", where, ")");
  }

  void check(const char *call, const Outcome &o, const std::string &doing) {
    if (!o.answered || o.status != PMIX_SUCCESS) fail_call(call, o, doing);
  }

  // Info for calls that accept a timeout, so the server gives up when we do.
  struct TimeoutInfo {
    explicit TimeoutInfo(double seconds) {
      int whole = server_seconds(seconds);
      PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &whole, PMIX_INT);
    }
    ~TimeoutInfo() { PMIX_INFO_DESTRUCT(&info); }
    pmix_info_t info;
  };

  Outcome get(const pmix_proc_t &proc, const char *key) {
    const double t = config_.timeout_s;
    return call_bounded(server_seconds(t) + kServerGraceS, [proc, key = std::string(key), t] {
      TimeoutInfo timeout(t);
      pmix_value_t *value = nullptr;
      pmix_status_t rc = PMIx_Get(&proc, key.c_str(), &timeout.info, 1, &value);
      return take_value(rc, value);
    });
  }

  uint64_t get_number(const pmix_proc_t &proc, const char *key, const char *key_name) {
    Outcome o = get(proc, key);
    check("PMIx_Get", o, cat("reading ", key_name));
    if (!o.text.empty())
      fail_call("PMIx_Get", {true, PMIX_ERR_TYPE_MISMATCH, 0, ""}, cat("reading ", key_name));
    return o.number;
  }

  std::string get_string(const pmix_proc_t &proc, const char *key) {
    Outcome o = get(proc, key);
    check("PMIx_Get", o, cat("reading rank 0's ", key));
    return o.text;
  }

  void put(const char *key, const std::string &text) {
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_STRING;
    value.data.string = const_cast<char *>(text.c_str());  // PMIx_Put copies it
    Outcome o;
    o.answered = true;
    o.status = PMIx_Put(PMIX_GLOBAL, key, &value);
    check("PMIx_Put", o, cat("publishing ", key));
  }

  void commit_and_fence() {
    const double t = config_.timeout_s;
    check("PMIx_Commit",
          call_bounded(t,
                       [] {
                         return Outcome{true, PMIx_Commit(), 0, ""};
                       }),
          "committing rank 0's bootstrap address");
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, self_.nspace, PMIX_RANK_WILDCARD);
    Outcome fence = call_bounded(server_seconds(t) + kServerGraceS, [job, t] {
      pmix_info_t info[2];
      bool collect = true;
      int whole = server_seconds(t);
      PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
      PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &whole, PMIX_INT);
      Outcome o{true, PMIx_Fence(&job, 1, info, 2), 0, ""};
      PMIX_INFO_DESTRUCT(&info[0]);
      PMIX_INFO_DESTRUCT(&info[1]);
      return o;
    });
    check("PMIx_Fence", fence,
          cat("waiting for all ", config_.size, " ranks to exchange rank 0's bootstrap address"));
  }

  void finalize() noexcept {
    if (!initialized_ || abandoned_) return;
    initialized_ = false;
    // Bounded as well: PMIx_Finalize waits for the server's acknowledgement.
    Outcome o = call_bounded(config_.timeout_s, [] {
      return Outcome{true, PMIx_Finalize(nullptr, 0), 0, ""};
    });
    if (!o.answered || o.status != PMIX_SUCCESS)
      log(LogLevel::warn, "PMIx_Finalize failed: ",
          o.answered ? PMIx_Error_string(o.status) : "no answer from the PMIx server", " (",
          context_, ")");
  }

  std::string launcher_;
  std::optional<std::string> ifname_;
  pmix_proc_t self_{};
  std::string nspace_;
  std::string context_;  // "srun, namespace slurm.pmix.7.0, rank 3", for messages
  bool initialized_ = false;
  bool abandoned_ = false;
};

}  // namespace

bool pmix_built_in() {
  return true;
}

std::unique_ptr<JobSource> make_pmix_job(const EnvConfig &base, std::string launcher,
                                         std::optional<std::string> ifname) {
  auto job = std::make_unique<PmixJob>(base, std::move(launcher), std::move(ifname));
  job->start();
  return job;
}

}  // namespace braid::detail
