#include "hosts.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <stdexcept>

#include "options.hpp"

namespace braidrun {
namespace {

std::optional<int> parse_slots(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1 ||
      value > kMaxRanks)
    return std::nullopt;
  return value;
}

bool valid_host_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
  });
}

void add_host(std::vector<HostSlots> &hosts, std::string name, int slots) {
  auto same =
      std::find_if(hosts.begin(), hosts.end(), [&](const HostSlots &h) { return h.name == name; });
  if (same != hosts.end())
    same->slots = std::min(same->slots + slots, kMaxRanks);
  else
    hosts.push_back({std::move(name), slots});
}

}  // namespace

std::optional<std::vector<HostSlots>> parse_host_list(std::string_view text, std::string *error) {
  std::vector<HostSlots> hosts;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const size_t colon = item.find(':');
    const std::string_view name = item.substr(0, colon);
    if (!valid_host_name(name)) {
      *error = "'" + std::string(item) + "' is not a host name";
      return std::nullopt;
    }
    int slots = 1;
    if (colon != std::string_view::npos) {
      const auto parsed = parse_slots(item.substr(colon + 1));
      if (!parsed) {
        *error = "'" + std::string(item) + "' needs slots from 1 to " + std::to_string(kMaxRanks);
        return std::nullopt;
      }
      slots = *parsed;
    }
    add_host(hosts, std::string(name), slots);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return hosts;
}

std::vector<HostSlots> read_hostfile(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read hostfile '" + path + "'");
  std::vector<HostSlots> hosts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::vector<std::string> words;
    size_t at = 0;
    while ((at = line.find_first_not_of(" \t\r", at)) != std::string::npos) {
      const size_t end = line.find_first_of(" \t\r", at);
      words.push_back(line.substr(at, end - at));
      at = end;
    }
    if (words.empty()) continue;
    const std::string where = "hostfile " + path + ":" + std::to_string(number) + ": ";
    if (!valid_host_name(words[0]))
      throw std::runtime_error(where + "'" + words[0] + "' is not a host name");
    int slots = 1;
    for (size_t i = 1; i < words.size(); ++i) {
      const auto parsed = words[i].rfind("slots=", 0) == 0
                              ? parse_slots(std::string_view(words[i]).substr(6))
                              : std::nullopt;
      if (!parsed)
        throw std::runtime_error(where + "'" + words[i] + "' is not slots=N (N from 1 to " +
                                 std::to_string(kMaxRanks) + ")");
      slots = *parsed;
    }
    add_host(hosts, words[0], slots);
  }
  if (hosts.empty()) throw std::runtime_error("hostfile '" + path + "' names no host");
  return hosts;
}

std::vector<Placement> place_ranks(const std::vector<HostSlots> &hosts, int ranks) {
  int total = 0;
  for (const HostSlots &h : hosts) total += h.slots;
  if (ranks == 0) ranks = std::min(total, kMaxRanks);
  if (ranks > total)
    throw std::runtime_error(std::to_string(ranks) + " ranks do not fit the " +
                             std::to_string(total) + " slots of the hosts given");
  std::vector<Placement> placement;
  for (const HostSlots &h : hosts) {
    const int here = std::min(h.slots, ranks - static_cast<int>(placement.size()));
    for (int i = 0; i < here; ++i) placement.push_back({h.name, is_this_host(h.name), 0, 0});
  }
  // Local ranks count per machine, not per entry: this machine may be listed under several
  // names (localhost, its hostname, 127.0.0.1) and a host more than once, and two ranks of one
  // machine must not both be its local rank 0 (an application picks its GPU or NIC by it).
  std::map<std::string, int> on_machine;
  auto machine = [](const Placement &p) { return p.local ? std::string() : p.host; };
  for (const Placement &p : placement) ++on_machine[machine(p)];
  std::map<std::string, int> next;
  for (Placement &p : placement) {
    p.local_rank = next[machine(p)]++;
    p.local_size = on_machine[machine(p)];
  }
  return placement;
}

std::vector<Placement> place_locally(int ranks) {
  std::vector<Placement> placement;
  for (int r = 0; r < ranks; ++r) placement.push_back({"", true, r, ranks});
  return placement;
}

bool is_this_host(const std::string &name) {
  if (name == "localhost" || name == "127.0.0.1" || name == "::1") return true;
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return false;
  const std::string full(buf);
  return name == full || name == full.substr(0, full.find('.'));
}

}  // namespace braidrun
