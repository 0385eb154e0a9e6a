// Which figures the cost model chooses with, and making sure every rank uses the same ones:
// a rank's BRAID_TUNING_FILE may differ from another's (a file per node, or none on some), and
// ranks that chose differently would run different algorithms in one collective.
#pragma once

#include <optional>

#include "selection/selection.hpp"
#include "tuning/machine_profile.hpp"

namespace braid::detail {

class Bootstrap;

// BRAID_SELECTION (model, the default, or rules) and this rank's BRAID_TUNING_FILE, read and
// checked before any network activity: an unknown mode or an unreadable or malformed file
// throws Failure naming it.
struct ModelRequest {
  bool use_model = true;
  std::optional<MachineProfile> profile;
};
ModelRequest model_request_from_environment();

// Collective over the bootstrap: every rank learns the lowest rank's profile among those that
// have one (the built-in typical figures when none has), and sets the model on `selection`.
// `net_latency_us` and `net_gbps` are the transport's hints (0 when it gives none).
void agree_on_model(Bootstrap &bootstrap, const ModelRequest &request,
                    coll::SelectionTable &selection, double net_latency_us, double net_gbps);

}  // namespace braid::detail
