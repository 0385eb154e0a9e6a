// NodeMap: which ranks share this rank's node, and one leader (the lowest rank) per node, from
// every rank's host identity. Every rank computes the same map from the same allgathered input,
// so topology-dependent choices (the selection table) agree everywhere.
#pragma once

#include <string>
#include <vector>

namespace braid::detail {

struct NodeMap {
  int rank = 0;
  int nodes = 1;
  int node = 0;                  // this rank's node; nodes are numbered by their lowest rank
  std::vector<int> node_of;      // node of every rank
  std::vector<int> local;        // ranks on this rank's node, ascending
  int local_rank = 0;            // index of `rank` in `local`
  std::vector<int> leaders;      // lowest rank of every node, by node number
  std::vector<int> local_index;  // every rank's index among the ranks of its node
  int max_local = 1;             // ranks on the most populated node

  int local_size() const { return static_cast<int>(local.size()); }
  bool leader() const { return local_rank == 0; }
};

// ids[r] is rank r's host identity.
NodeMap make_node_map(const std::vector<std::string> &ids, int rank);

}  // namespace braid::detail
