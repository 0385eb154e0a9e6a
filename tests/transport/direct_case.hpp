// The transport suite's `direct` case: eager messages into receives posted before them, and
// cancels of receives the transport may have advertised (see case_direct).
#pragma once

#include "transport_checks.hpp"

namespace braid::transport_test {

void case_direct(Job &job);

}  // namespace braid::transport_test
