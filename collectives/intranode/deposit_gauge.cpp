#include "intranode/deposit_gauge.hpp"

namespace braid::coll {

bool DepositGauge::streams(size_t bytes) {
  if (always_) return true;
  if (!slow_) return false;
  if (bytes < kMinBytes || ++since_probe_ < kProbeEvery) return true;
  since_probe_ = 0;
  return false;
}

void DepositGauge::ordinary(size_t bytes, uint64_t ns) {
  if (bytes < kMinBytes || ns == 0) return;
  slow_ = static_cast<double>(bytes) < kSlowBelow * static_cast<double>(ns);
  if (!slow_) since_probe_ = 0;
}

}  // namespace braid::coll
