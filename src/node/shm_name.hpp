// Names of node-local shared memory (node_pool.hpp creates and opens the file). A name lives in
// /dev/shm only between creation and the moment every rank of the node has opened it: then it
// is unlinked, so the kernel frees the memory when the last rank unmaps it or dies, and nothing
// leaks.
#pragma once

#include <string>

namespace braid::detail {

// A name unique to the job (its key), the segment's use (`comm`) and the node (its leader's rank
// and pid).
std::string segment_name(const std::string &job_key, const char *comm, int leader_rank,
                         int leader_pid);
void unlink_segment(const std::string &name) noexcept;

}  // namespace braid::detail
