// Starting a rank on another host through the launch agent, the way Open MPI's rsh agent does:
//   <agent words...> <host> env NAME=VALUE... <program> <args...>
// The agent hands that command to a shell on the host (as ssh does), so words that a shell
// would split or expand are single-quoted; plain words pass unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace braidrun {

// The agent command line split at blanks ("ssh -p 2222" -> {"ssh", "-p", "2222"}).
std::vector<std::string> split_agent(const std::string &agent);

std::string shell_quote(std::string_view word);

// Which of the rank's variables travel to the host: braid's own (BRAID_*) and UCX's (UCX_*),
// whether braidrun set them or inherited them. Others come from the host's own environment,
// as with any ssh session.
bool forwarded_to_remote_rank(std::string_view entry);

// rank_environment: the rank's NAME=VALUE entries; command: program and arguments.
std::vector<std::string> remote_command(const std::vector<std::string> &agent,
                                        const std::string &host,
                                        const std::vector<std::string> &rank_environment,
                                        const std::vector<std::string> &command);

// The launch agent's own environment: braidrun's without BRAID_* (the agent runs locally, and
// an agent that passes its environment on must not hand the rank stale braid variables).
std::vector<std::string> agent_environment(const char *const *inherited);

}  // namespace braidrun
