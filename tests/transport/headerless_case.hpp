// The transport suite's `headerless` case: eager messages whose tags lie near the previous one
// to the same peer (the verbs plugin sends those without a header, the tag as a delta in the
// immediate data), interleaved with tags that are not, across size classes (see
// case_headerless).
#pragma once

#include "transport_checks.hpp"

namespace braid::transport_test {

void case_headerless(Job &job);

}  // namespace braid::transport_test
