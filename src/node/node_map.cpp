#include "node/node_map.hpp"

#include <algorithm>
#include <map>

namespace braid::detail {

NodeMap make_node_map(const std::vector<std::string> &ids, int rank) {
  NodeMap m;
  m.rank = rank;
  const int n = static_cast<int>(ids.size());
  std::map<std::string, int> node_by_id;
  std::vector<int> count;
  m.node_of.resize(n);
  m.local_index.resize(n);
  for (int r = 0; r < n; ++r) {
    auto [it, added] = node_by_id.emplace(ids[r], static_cast<int>(m.leaders.size()));
    if (added) {
      m.leaders.push_back(r);
      count.push_back(0);
    }
    m.node_of[r] = it->second;
    m.local_index[r] = count[it->second]++;
  }
  m.nodes = static_cast<int>(m.leaders.size());
  m.node = m.node_of[rank];
  for (int r = 0; r < n; ++r)
    if (m.node_of[r] == m.node) m.local.push_back(r);
  m.local_rank = m.local_index[rank];
  m.max_local = *std::max_element(count.begin(), count.end());
  return m;
}

}  // namespace braid::detail
