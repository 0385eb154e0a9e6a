#include "api/model_setup.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "error.hpp"
#include "log.hpp"

namespace braid::detail {
namespace {

// One rank's profile on the bootstrap: fixed size, so the allgather needs no lengths.
struct WireProfile {
  uint32_t has = 0;
  int32_t core_a = 0, core_b = 0;
  uint32_t pad = 0;
  double figures[6] = {};
  char host[48] = {};
  char measured_at[32] = {};
};

double *figure(MachineProfile &p, int i) {
  double *all[] = {&p.handoff_rtt_ns,   &p.memcpy_gbps, &p.memcpy_large_gbps,
                   &p.window_copy_gbps, &p.reduce_gbps, &p.cma_gbps};
  return all[i];
}

WireProfile to_wire(const std::optional<MachineProfile> &profile) {
  WireProfile w;
  if (!profile) return w;
  MachineProfile p = *profile;
  w.has = 1;
  w.core_a = p.core_a;
  w.core_b = p.core_b;
  for (int i = 0; i < 6; ++i) w.figures[i] = *figure(p, i);
  std::strncpy(w.host, p.host.c_str(), sizeof w.host - 1);
  std::strncpy(w.measured_at, p.measured_at.c_str(), sizeof w.measured_at - 1);
  return w;
}

MachineProfile from_wire(const WireProfile &w) {
  MachineProfile p;
  p.core_a = w.core_a;
  p.core_b = w.core_b;
  for (int i = 0; i < 6; ++i) *figure(p, i) = w.figures[i];
  p.host.assign(w.host, strnlen(w.host, sizeof w.host));
  p.measured_at.assign(w.measured_at, strnlen(w.measured_at, sizeof w.measured_at));
  return p;
}

// The overrides travel as indices in all_algorithms(), in a whole number of 8-byte words.
constexpr size_t kOverrideSlots = (coll::kKindCount + 3) / 4 * 4;
constexpr uint16_t kNone = 0xffff;

uint16_t override_index(const coll::Algorithm *a) {
  if (a == nullptr) return kNone;
  return static_cast<uint16_t>(a - coll::all_algorithms().data());
}

std::string override_name(uint16_t index) {
  const auto &all = coll::all_algorithms();
  if (index == kNone) return "none";
  if (index >= all.size()) return cat("algorithm #", index);
  return cat("'", all[index].name, "'");
}

}  // namespace

ModelRequest model_request_from_environment() {
  ModelRequest request;
  const char *mode = std::getenv("BRAID_SELECTION");
  const std::string_view m = mode != nullptr ? mode : "";
  if (m == "rules")
    request.use_model = false;
  else if (!m.empty() && m != "model")
    fail(BRAID_ERR_INVALID_ARGUMENT, "BRAID_SELECTION='", m, "' is not model or rules");
  std::string why;
  request.profile = profile_from_environment(&why);
  if (!request.profile && !why.empty()) fail(BRAID_ERR_INVALID_ARGUMENT, why);
  return request;
}

void agree_on_model(Bootstrap &bootstrap, const ModelRequest &request,
                    coll::SelectionTable &selection, double net_latency_us, double net_gbps) {
  // Every rank takes part even with BRAID_SELECTION=rules: the allgather also checks that
  // the ranks agree on the mode (a rank on rules next to one on the model would hang). The
  // transport's hints travel too: they may differ by NIC, and rank 0's serve everyone.
  struct Sent {
    WireProfile profile;
    uint32_t use_model = 0;
    uint32_t pad = 0;  // every byte on the wire is set
    double net_latency_us = 0;
    double net_gbps = 0;
    // BRAID_<KIND>_ALGO per kind: the index in all_algorithms(), kNone when not forced (the
    // slots past the kinds stay 0 and are never compared). Ranks that force different
    // algorithms exchange messages that never match: a hang until BRAID_TIMEOUT where no
    // control plane diagnoses it.
    std::array<uint16_t, kOverrideSlots> overrides{};
  };
  static_assert(sizeof(WireProfile) == 4 * 4 + 6 * 8 + 48 + 32, "no padding goes on the wire");
  Sent sent;
  sent.profile = to_wire(request.use_model ? request.profile : std::nullopt);
  sent.use_model = request.use_model ? 1u : 0u;
  sent.net_latency_us = net_latency_us;
  sent.net_gbps = net_gbps;
  for (size_t k = 0; k < coll::kKindCount; ++k)
    sent.overrides[k] = override_index(selection.override_of(static_cast<coll::CollKind>(k)));
  static_assert(sizeof(Sent) == sizeof(WireProfile) + 8 + 16 + 2 * kOverrideSlots,
                "no padding goes on the wire");
  std::vector<Sent> got(static_cast<size_t>(bootstrap.size()));
  bootstrap.allgather(&sent, got.data(), sizeof sent);
  for (size_t r = 0; r < got.size(); ++r)
    if (got[r].use_model != sent.use_model)
      fail(BRAID_ERR_INVALID_ARGUMENT, "BRAID_SELECTION differs between ranks: rank ", r,
           " chooses by ", got[r].use_model ? "the model" : "the rules", ", rank ",
           bootstrap.rank(), " by ", sent.use_model ? "the model" : "the rules");
  // Against rank 0's, so that every rank words the failure alike.
  for (size_t k = 0; k < coll::kKindCount; ++k)
    for (size_t r = 1; r < got.size(); ++r)
      if (got[r].overrides[k] != got[0].overrides[k]) {
        const auto kind = static_cast<coll::CollKind>(k);
        fail(BRAID_ERR_INVALID_ARGUMENT, coll::kind_info(kind).override_var,
             " differs between ranks: rank 0 forces ", override_name(got[0].overrides[k]),
             ", rank ", r, " ", override_name(got[r].overrides[k]),
             " (every rank must force the same algorithm, or none)");
      }
  if (!request.use_model) {
    log(LogLevel::info, "algorithms chosen by the rule table (BRAID_SELECTION=rules)");
    return;
  }
  coll::CostInputs inputs = coll::CostInputs::typical();
  for (size_t r = 0; r < got.size(); ++r) {
    if (got[r].profile.has == 0) continue;
    const MachineProfile p = from_wire(got[r].profile);
    inputs = coll::CostInputs::from_profile(
        p, cat("BRAID_TUNING_FILE of rank ", r, " (", p.host.empty() ? "?" : p.host, ", measured ",
               p.measured_at.empty() ? "?" : p.measured_at, ")"));
    break;
  }
  // A transport that knows its network's figures says so (braid_transport_props_t's hints);
  // rank 0's, so that every rank predicts alike.
  if (got[0].net_latency_us > 0) inputs.network.latency_us = got[0].net_latency_us;
  if (got[0].net_gbps > 0) inputs.network.gbps = inputs.network.eager_gbps = got[0].net_gbps;
  log(LogLevel::info, "algorithms chosen by the cost model, from ", inputs.source);
  selection.set_model(std::move(inputs));
}

}  // namespace braid::detail
