#include "control/control_watch.hpp"

#include <braid/braid.h>

#include <chrono>
#include <thread>

#include "bootstrap/text.hpp"
#include "engine/coll_args.hpp"
#include "kernels/dtype.hpp"
#include "log.hpp"

namespace braid::detail {
namespace {

using State = ctl::RankAnswer::State;
// How long a diagnosis may wait for every rank's answer (each answers from its own thread).
constexpr double kQuerySeconds = 3.0;

std::string dtype_text(int32_t dt) {
  return coll::dtype_valid(dt) ? coll::dtype_name(static_cast<braid_dtype_t>(dt))
                               : cat("dtype ", dt);
}
std::string op_text(int32_t op) {
  return coll::op_valid(op) ? coll::op_name(static_cast<braid_op_t>(op)) : cat("op ", op);
}

// One difference between two ranks' calls, lower rank first; "" when they agree.
std::string difference(int a, const CallSignature &x, int b, const CallSignature &y) {
  if (a > b) return difference(b, y, a, x);
  if (x.kind != y.kind)
    return cat("rank ", a, " is in ", call_name(x), ", rank ", b, " in ", call_name(y));
  if (x.count != y.count)
    return cat("rank ", a, " passed ", x.count, " elements, rank ", b, " passed ", y.count);
  if (x.dtype != y.dtype)
    return cat("rank ", a, " passed dtype ", dtype_text(x.dtype), ", rank ", b, " passed ",
               dtype_text(y.dtype));
  if (x.op != y.op)
    return cat("rank ", a, " passed op ", op_text(x.op), ", rank ", b, " passed ", op_text(y.op));
  if (x.root != y.root)
    return cat("rank ", a, " passed root ", x.root, ", rank ", b, " passed root ", y.root);
  if (x.algorithm != y.algorithm && !x.algorithm.empty() && !y.algorithm.empty()) {
    const coll::KindInfo *info = coll::find_kind(x.kind);
    return cat("rank ", a, " selected ", x.algorithm, ", rank ", b, " selected ", y.algorithm, " (",
               info ? info->override_var : "BRAID_<KIND>_ALGO", " must be the same on every rank)");
  }
  return "";
}

std::string latest_call(const ctl::RankAnswer &a) {
  if (a.entered == 0) return "it has made no collective call";
  if (a.sig.seq + 1 != a.entered) return cat("it has made ", a.entered, " collective calls");
  return cat("its latest call is ", call_name(a.sig));
}

}  // namespace

std::string call_name(const CallSignature &sig) {
  const coll::KindInfo *info = coll::find_kind(sig.kind);
  if (info == nullptr) return cat("call #", sig.seq);
  return cat(info->name, " #", sig.seq);
}

std::vector<std::string> call_differences(int me, const std::vector<ctl::RankAnswer> &answers) {
  std::vector<std::string> out;
  if (me < 0 || static_cast<size_t>(me) >= answers.size()) return out;
  const ctl::RankAnswer &mine = answers[me];
  if (mine.state != State::entered) return out;
  for (const ctl::RankAnswer &a : answers) {
    if (a.rank == me) continue;
    if (a.state == State::entered) {
      if (std::string d = difference(me, mine.sig, a.rank, a.sig); !d.empty()) out.push_back(d);
    } else if (a.state == State::left) {
      out.push_back(cat("rank ", a.rank, " called braid_finalize after ", a.entered,
                        " collectives while rank ", me, " is in ", call_name(mine.sig)));
    }
  }
  return out;
}

std::vector<std::pair<uint64_t, std::string>> ControlWatch::notices() const {
  std::vector<std::pair<uint64_t, std::string>> mine;
  for (auto &[key, text] : control_.notices(tag_))
    if (key_context(key) == context_) mine.emplace_back(key_seq(key), std::move(text));
  return mine;
}

std::optional<Failure> ControlWatch::diagnose(const coll::CallLabel &label, bool timed_out) {
  // A disagreement another rank reported explains more than its leaving afterwards.
  if (auto text = notice_for(label.seq)) return Failure(BRAID_ERR_MISMATCH, *text);
  if (control_.failed()) return Failure(BRAID_ERR_PEER_FAILED, control_.failure_text());
  const uint64_t key = call_key(context_, label.seq);
  std::optional<std::vector<ctl::RankAnswer>> world = control_.query(key, tag_, kQuerySeconds);
  if (auto text = notice_for(label.seq)) return Failure(BRAID_ERR_MISMATCH, *text);
  if (!world) {
    // A query fails at once when the control plane's connection closes (its hub died), often
    // before the service thread has marked the failure; a transport error from the same dead
    // rank got here first. A moment's wait lets the failure name the rank.
    for (int i = 0; i < 100 && !control_.failed(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (control_.failed()) return Failure(BRAID_ERR_PEER_FAILED, control_.failure_text());
    return std::nullopt;
  }
  if (control_.failed()) return Failure(BRAID_ERR_PEER_FAILED, control_.failure_text());
  // The members' answers, renumbered as communicator ranks.
  auto answers = std::make_optional<std::vector<ctl::RankAnswer>>();
  for (size_t r = 0; r < members_.size(); ++r) {
    const auto w = static_cast<size_t>(members_[r]);
    if (w >= world->size()) return std::nullopt;
    answers->push_back((*world)[w]);
    answers->back().rank = static_cast<int>(r);
  }
  const int me = me_;
  std::vector<int> failed;
  for (const ctl::RankAnswer &a : *answers)
    if (a.state == State::failed) failed.push_back(a.rank);
  // Worded like every other report of a dead rank ("rank 2 failed: ..."), which is what
  // programs and the fault tests look for.
  if (!failed.empty())
    return Failure(BRAID_ERR_PEER_FAILED,
                   cat(bs::rank_list(failed), " failed (rank 0 lost its connection to ",
                       failed.size() == 1 ? "it" : "them", ")"));

  std::vector<std::string> diffs = call_differences(me, *answers);
  if (!diffs.empty()) {
    std::string text = cat("ranks disagree about ", call_name((*answers)[me].sig), ": ");
    for (size_t i = 0; i < diffs.size() && i < 4; ++i) text += (i ? "; " : "") + diffs[i];
    if (diffs.size() > 4) text += cat("; and ", diffs.size() - 4, " more");
    control_.announce(key, tag_, text);
    return Failure(BRAID_ERR_MISMATCH, text);
  }
  if (!timed_out) return std::nullopt;

  std::vector<int> absent;
  std::string details;
  for (const ctl::RankAnswer &a : *answers) {
    if (a.state == State::entered) continue;
    absent.push_back(a.rank);
    std::string what = a.state == State::silent      ? "it did not answer the control plane"
                       : a.state == State::left      ? "it is in braid_finalize"
                       : a.state == State::forgotten ? "it is far ahead"
                                                     : latest_call(a);
    details += cat(details.empty() ? "" : "; ", "rank ", a.rank, ": ", what);
  }
  if (absent.empty())
    return Failure(BRAID_ERR_TIMEOUT,
                   cat("every rank had entered ", coll::kind_name(label.kind), " #", label.seq,
                       " (the data transport is stuck or a message was lost)"));
  std::string text =
      cat(bs::rank_list(absent), absent.size() == 1 ? " had" : " had", " not entered ",
          coll::kind_name(label.kind), " #", label.seq, " (", details, ")");
  log(LogLevel::warn, label.str(), " timed out: ", text);
  return Failure(BRAID_ERR_TIMEOUT, text);
}

}  // namespace braid::detail
