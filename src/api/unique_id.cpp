#include "api/unique_id.hpp"

#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>

#include "error.hpp"
#include "job/root_contact.hpp"
#include "job/sources.hpp"
#include "log.hpp"
#include "net/rendezvous_service.hpp"

namespace braid::detail {
namespace {

// Layout of the 128 bytes: magic, version, key (32 hex digits), the addresses' length and
// text, zero padding, and an FNV-1a checksum of everything before it.
constexpr char kMagic[8] = {'b', 'r', 'a', 'i', 'd', 'u', 'i', 'd'};
constexpr uint8_t kVersion = 1;
constexpr size_t kKeyAt = 9, kKeyLen = 32;
constexpr size_t kLenAt = kKeyAt + kKeyLen;
constexpr size_t kTextAt = kLenAt + 1;
constexpr size_t kSumAt = sizeof(braid_unique_id_t::internal) - 8;
constexpr size_t kMaxText = kSumAt - kTextAt;

uint64_t checksum(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 0x100000001b3ull;
  return h;
}

// The services this process started: each answers until its group has formed (an id may be
// used late), or until the process exits.
std::mutex g_services_mutex;
std::vector<std::unique_ptr<net::RendezvousService>> &services() {
  static std::vector<std::unique_ptr<net::RendezvousService>> all;
  return all;
}

// As many of the service's addresses as fit, whole.
std::string fitting(const std::string &addresses) {
  std::string out;
  size_t at = 0;
  while (at < addresses.size()) {
    size_t comma = addresses.find(',', at);
    if (comma == std::string::npos) comma = addresses.size();
    const std::string one = addresses.substr(at, comma - at);
    if (out.size() + (out.empty() ? 0 : 1) + one.size() > kMaxText) break;
    out += (out.empty() ? "" : ",") + one;
    at = comma + 1;
  }
  return out;
}

}  // namespace

braid_unique_id_t make_unique_id() {
  const std::string key = random_job_key();
  const char *ifname = std::getenv("BRAID_SOCKET_IFNAME");
  std::unique_ptr<net::RendezvousService> service;
  try {
    service = std::make_unique<net::RendezvousService>(
        key, ifname, log_threshold() >= LogLevel::info,
        [](const std::string &line) { log(LogLevel::info, "unique id: ", line); });
  } catch (const std::exception &e) {
    fail(BRAID_ERR_BOOTSTRAP,
         "braid_get_unique_id: cannot start the rendezvous service: ", e.what());
  }
  const std::string text = fitting(service->addresses());
  if (text.empty() || key.size() != kKeyLen)
    fail(BRAID_ERR_BOOTSTRAP, "braid_get_unique_id: the service's address '", service->addresses(),
         "' does not fit in an id");
  braid_unique_id_t id{};
  char *b = id.internal;
  std::memcpy(b, kMagic, sizeof kMagic);
  b[sizeof kMagic] = static_cast<char>(kVersion);
  std::memcpy(b + kKeyAt, key.data(), kKeyLen);
  b[kLenAt] = static_cast<char>(text.size());
  std::memcpy(b + kTextAt, text.data(), text.size());
  const uint64_t sum = checksum(b, kSumAt);
  std::memcpy(b + kSumAt, &sum, sizeof sum);
  log(LogLevel::info, "unique id: rendezvous service at ", text);
  std::lock_guard lock(g_services_mutex);
  // The services whose groups formed are let go here (their threads have ended).
  std::erase_if(services(), [](const auto &s) { return s->finished(); });
  services().push_back(std::move(service));
  return id;
}

UniqueIdContent decode_unique_id(const braid_unique_id_t &id) {
  const char *b = id.internal;
  uint64_t sum = 0;
  std::memcpy(&sum, b + kSumAt, sizeof sum);
  if (std::memcmp(b, kMagic, sizeof kMagic) != 0 || sum != checksum(b, kSumAt))
    fail(BRAID_ERR_BOOTSTRAP,
         "braid_comm_init_rank: the id is not one braid_get_unique_id made (bad magic or "
         "checksum: corrupted in transit, or forged)");
  if (static_cast<uint8_t>(b[sizeof kMagic]) != kVersion)
    fail(BRAID_ERR_BOOTSTRAP, "braid_comm_init_rank: the id is of version ",
         int(static_cast<uint8_t>(b[sizeof kMagic])), ", this braid reads version ", int(kVersion));
  const size_t len = static_cast<uint8_t>(b[kLenAt]);
  if (len == 0 || len > kMaxText)
    fail(BRAID_ERR_BOOTSTRAP, "braid_comm_init_rank: the id's address field is ", len,
         " bytes long");
  UniqueIdContent out;
  out.job_key.assign(b + kKeyAt, kKeyLen);
  const std::string text(b + kTextAt, len);
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    Endpoint e;
    try {
      parse_host_port(std::string_view(text).substr(at, comma - at), "the unique id's address",
                      &e.host, &e.port);
    } catch (const Failure &f) {  // a checksum that matches bytes braid did not write
      fail(BRAID_ERR_BOOTSTRAP, "braid_comm_init_rank: ", f.message());
    }
    out.service.push_back(e);
    at = comma + 1;
  }
  return out;
}

std::unique_ptr<Process> join_unique_id(const braid_unique_id_t &id, int nranks, int rank) {
  UniqueIdContent content = decode_unique_id(id);
  const EnvLookup env = process_env();
  // Transport, timeout and the other settings from the environment; the place in the job from
  // the arguments. BRAID_RANK and friends, if set, describe another job (a launcher's, whole or
  // partial), so they are not even read.
  const EnvLookup settings = [&env](const char *name) -> std::optional<std::string> {
    static constexpr std::string_view kPlace[] = {
        "BRAID_RANK",      "BRAID_SIZE",       "BRAID_LOCAL_RANK", "BRAID_LOCAL_SIZE",
        "BRAID_BOOTSTRAP", "BRAID_RENDEZVOUS", "BRAID_JOB_KEY"};
    for (std::string_view p : kPlace)
      if (p == name) return std::nullopt;
    return env(name);
  };
  EnvConfig config = parse_env_config(settings);
  config.rank = rank;
  config.size = nranks;
  config.local_rank = 0;
  config.local_size = 1;
  config.bootstrap_host.clear();
  config.bootstrap_port = 0;
  config.rendezvous = std::move(content.service);
  config.job_key = std::move(content.job_key);
  config.launched = true;
  const std::optional<std::string> ifname = env("BRAID_SOCKET_IFNAME");
  std::string name = cat("a unique id (rank ", rank, " of ", nranks, ")");
  return create_process(make_env_job(std::move(config), std::move(name), ifname), env);
}

}  // namespace braid::detail
