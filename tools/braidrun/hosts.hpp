// Where ranks run: the hosts of --host or --hostfile with their slots, and the placement of
// ranks on them in slot order (host 1's slots first, then host 2's, ...).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace braidrun {

struct HostSlots {
  std::string name;
  int slots = 1;
};

// "h1:2,h2:2,h3" (slots default to 1). A host named twice gets the sum of its slots at its
// first position. nullopt with *error saying what is wrong.
std::optional<std::vector<HostSlots>> parse_host_list(std::string_view text, std::string *error);

// One host per line, "host" or "host slots=N"; '#' starts a comment; blank lines are ignored.
// Throws std::runtime_error naming the file and line.
std::vector<HostSlots> read_hostfile(const std::string &path);

struct Placement {
  std::string host;   // empty for a job without --host/--hostfile
  bool local = true;  // started directly, not through the launch agent
  int local_rank = 0;
  int local_size = 1;
};

// Rank r's placement at index r. ranks == 0 means one rank per slot. Throws
// std::runtime_error when the ranks do not fit the slots.
std::vector<Placement> place_ranks(const std::vector<HostSlots> &hosts, int ranks);

// All ranks on this machine (no hosts given): local rank = rank.
std::vector<Placement> place_locally(int ranks);

// localhost, 127.0.0.1, ::1, or this machine's hostname (short or full).
bool is_this_host(const std::string &name);

}  // namespace braidrun
