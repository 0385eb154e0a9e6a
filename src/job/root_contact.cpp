#include "job/root_contact.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "bootstrap/socket.hpp"
#include "error.hpp"
#include "log.hpp"
#include "net/interfaces.hpp"

namespace braid::detail {

std::string encode_addresses(const std::vector<bs::HostPort> &addresses) {
  std::string out;
  for (const bs::HostPort &a : addresses)
    out += (out.empty() ? "" : ",") + bs::format_host_port(a.host, a.port);
  return out;
}

std::vector<bs::HostPort> decode_addresses(std::string_view text, const std::string &what) {
  std::vector<bs::HostPort> out;
  try {
    while (true) {
      const size_t comma = text.find(',');
      out.push_back(bs::parse_host_port(text.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      text.remove_prefix(comma + 1);
    }
  } catch (const Failure &f) {
    fail(BRAID_ERR_BOOTSTRAP, what, ": ", f.message());
  }
  return out;
}

std::string random_job_key() {
  bs::Fd urandom(open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (!urandom.valid())
    fail(BRAID_ERR_BOOTSTRAP,
         "rank 0: cannot open /dev/urandom for the job key: ", bs::errno_text(errno));
  unsigned char bytes[16];
  size_t filled = 0;
  while (filled < sizeof bytes) {
    const ssize_t n = read(urandom.get(), bytes + filled, sizeof bytes - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      fail(BRAID_ERR_BOOTSTRAP, "rank 0: cannot read /dev/urandom for the job key: ",
           n < 0 ? bs::errno_text(errno) : "end of file");
    filled += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key;
  for (unsigned char b : bytes) {
    key += kHex[b >> 4];
    key += kHex[b & 0xf];
  }
  return key;
}

namespace {

// Rank 0's listener and what it publishes: the addresses (with the listener's port) and a new
// key.
struct RootListener {
  BootstrapListener listener;
  RootContact contact;
};

RootListener listen_as_root(const char *ifname, bool new_key) {
  std::string error;
  const std::vector<net::Interface> all = net::list_interfaces(&error);
  if (!error.empty()) fail(BRAID_ERR_BOOTSTRAP, "rank 0: cannot list network interfaces: ", error);
  const net::AddressChoice choice = net::choose_addresses(all, ifname);
  if (choice.chosen.empty())
    fail(BRAID_ERR_BOOTSTRAP, "rank 0: no address to publish for the bootstrap: ", choice.error);
  const bool ipv6 = std::any_of(choice.chosen.begin(), choice.chosen.end(),
                                [](const net::Interface &i) { return i.ipv6; });
  RootListener out{BootstrapListener::on_any_interface(ipv6), {}};
  for (const net::Interface &i : choice.chosen)
    out.contact.addresses.push_back({i.address, out.listener.port()});
  if (new_key) out.contact.job_key = random_job_key();
  log(LogLevel::info, "bootstrap: rank 0 listens on port ", out.listener.port(), " and publishes ",
      net::describe(choice.chosen), ", ", choice.reason);
  return out;
}

// Rank 0: the listener first (its port goes into the published addresses), then the board.
std::unique_ptr<Bootstrap> form_as_root(BootstrapConfig cfg, ContactBoard &board,
                                        const char *ifname, bool new_key, std::string *root_address,
                                        std::string *job_key) {
  std::optional<RootListener> root;
  try {
    root.emplace(listen_as_root(ifname, new_key));
  } catch (const Failure &f) {
    // The others are waiting on the board for an address: tell them why none comes. The
    // board's own failure (say, the fence times out) is secondary to this one.
    RootContact failed;
    failed.failure = f.message();
    try {
      board.share(&failed);
    } catch (const Failure &also) {
      log(LogLevel::info,
          "bootstrap: rank 0 could not tell the others of its failure: ", also.message());
    }
    throw;
  }
  board.share(&root->contact);

  const RootContact &contact = root->contact;
  cfg.host = contact.addresses.front().host;
  cfg.port = root->listener.port();
  if (new_key) cfg.job_key = *job_key = contact.job_key;
  *root_address = encode_addresses(contact.addresses);
  std::unique_ptr<Bootstrap> bootstrap = make_tcp_bootstrap(cfg, std::move(root->listener));
  board.formed();
  return bootstrap;
}

}  // namespace

std::unique_ptr<Bootstrap> form_through_board(BootstrapConfig cfg, ContactBoard &board,
                                              const char *ifname, bool new_key,
                                              std::string *root_address, std::string *job_key) {
  if (cfg.rank == 0)
    return form_as_root(std::move(cfg), board, ifname, new_key, root_address, job_key);
  RootContact contact = board.share(nullptr);
  if (contact.addresses.empty())
    fail(BRAID_ERR_BOOTSTRAP, "rank ", cfg.rank, ": rank 0 published no bootstrap address");
  cfg.host = contact.addresses.front().host;
  cfg.port = contact.addresses.front().port;
  cfg.more_addresses.assign(contact.addresses.begin() + 1, contact.addresses.end());
  if (new_key) cfg.job_key = *job_key = contact.job_key;
  *root_address = encode_addresses(contact.addresses);
  return make_tcp_bootstrap(cfg);
}

}  // namespace braid::detail
