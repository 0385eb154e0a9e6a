#include "rank_environment.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

namespace braidrun {

std::vector<std::string> rank_environment(const char *const *inherited, const Options &options,
                                          const JobIdentity &job, int rank, int size,
                                          const Placement &placement) {
  std::vector<std::pair<std::string_view, std::string>> added = {
      {"BRAID_RANK", std::to_string(rank)},
      {"BRAID_SIZE", std::to_string(size)},
      {"BRAID_LOCAL_RANK", std::to_string(placement.local_rank)},
      {"BRAID_LOCAL_SIZE", std::to_string(placement.local_size)},
  };
  if (job.rendezvous.empty())
    added.emplace_back("BRAID_BOOTSTRAP", job.bootstrap);
  else
    added.emplace_back("BRAID_RENDEZVOUS", job.rendezvous);
  added.emplace_back("BRAID_JOB_KEY", job.job_key);
  if (options.transport) added.emplace_back("BRAID_TRANSPORT", *options.transport);
  if (options.timeout) added.emplace_back("BRAID_TIMEOUT", *options.timeout);

  auto is_replaced = [&added](std::string_view entry) {
    const std::string_view name = entry.substr(0, entry.find('='));
    if (name == "BRAID_BOOTSTRAP" || name == "BRAID_RENDEZVOUS") return true;
    return std::any_of(added.begin(), added.end(),
                       [name](const auto &variable) { return variable.first == name; });
  };

  std::vector<std::string> environment;
  for (const char *const *entry = inherited; entry != nullptr && *entry != nullptr; ++entry) {
    if (!is_replaced(*entry)) environment.emplace_back(*entry);
  }
  for (const auto &[name, value] : added) environment.push_back(std::string(name) + "=" + value);
  return environment;
}

}  // namespace braidrun
