// Source 1 (and 3, a 1-rank world): the braid environment contract. BRAID_BOOTSTRAP names
// rank 0's address directly; BRAID_RENDEZVOUS (braidrun across hosts) names braidrun's
// rendezvous service, through which rank 0 publishes an address it chose itself.
#include "job/rendezvous_board.hpp"
#include "job/root_contact.hpp"
#include "job/sources.hpp"

namespace braid::detail {
namespace {

class EnvJob final : public JobSource {
 public:
  EnvJob(EnvConfig config, std::string name, std::optional<std::string> ifname)
      : JobSource(std::move(config), std::move(name)), ifname_(std::move(ifname)) {}

  std::unique_ptr<Bootstrap> form_bootstrap() override {
    const EnvConfig &c = config_;
    BootstrapConfig bc{c.rank, c.size, c.bootstrap_host, c.bootstrap_port, c.job_key, c.timeout_s};
    if (c.size > 1 && !c.rendezvous.empty()) {
      RendezvousBoard board(c.rendezvous, c.job_key, c.rank, c.timeout_s);
      return form_through_board(bc, board, ifname_ ? ifname_->c_str() : nullptr, false,
                                &root_address_, &config_.job_key);
    }
    if (c.size > 1) root_address_ = bs::format_host_port(c.bootstrap_host, c.bootstrap_port);
    if (c.size == 1 && !c.rendezvous.empty()) {
      // A one-rank group from a unique id: its service has served it, so it may end.
      std::unique_ptr<Bootstrap> alone = make_tcp_bootstrap(bc);
      RendezvousBoard(c.rendezvous, c.job_key, c.rank, c.timeout_s).formed();
      return alone;
    }
    return make_tcp_bootstrap(bc);
  }

 private:
  std::optional<std::string> ifname_;
};

}  // namespace

std::unique_ptr<JobSource> make_env_job(EnvConfig config, std::string name,
                                        std::optional<std::string> ifname) {
  return std::make_unique<EnvJob>(std::move(config), std::move(name), std::move(ifname));
}

}  // namespace braid::detail
