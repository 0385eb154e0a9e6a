// What braid-info --explain says about the path a node-local call of a given size takes inside
// its algorithm. Only constants, no engine: braid-bench compiles it with the selection table.
#include "intranode/algorithms.hpp"
#include "intranode/direct.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/single_copy.hpp"

namespace braid::coll {

const char *allreduce_shm_note(size_t bytes) {
  const bool small = bytes <= kSmallReduceBytes;
  if (bytes < kDirectMinBytes)
    return small ? " [every rank reduces all slots]" : " [pipelined reduce-scatter + gather]";
  return small ? " [every rank reduces all slots] [zero-copy on braid_mem_alloc buffers]"
               : " [pipelined reduce-scatter + gather] [zero-copy on braid_mem_alloc buffers]";
}

const char *broadcast_shm_note(size_t bytes) {
  // root_mapped_min: where ranks share cores the root offers its buffer from 1 MiB only.
  if (bytes >= kDirectMinBytes)
    return " [zero-copy on braid_mem_alloc buffers (from 1 MiB where ranks share cores)] [else "
           "single copy (CMA) where measured faster]";
  // Up to the records' room (8224 bytes) the vector travels with the root's call record.
  return bytes > sizeof(CallSlot::data) ? " [single copy (CMA) where measured faster]" : "";
}

}  // namespace braid::coll
