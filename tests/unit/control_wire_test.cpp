// The control plane's messages: text that is not ASCII still travels (a reason in the
// application's locale must not read as garbage from a broken peer), and claims a rank may not
// make, or answers out of their place in a report, are refused.
#include <gtest/gtest.h>

#include <string>

#include "control/control_wire.hpp"

namespace braid::detail::ctl {
namespace {

std::optional<Message> round_trip(const Message &m, int size, std::string *why) {
  const std::vector<uint8_t> payload = encode_payload(m);
  return decode_payload(static_cast<uint32_t>(m.type), payload, size, why);
}

RankAnswer answer(int rank, RankAnswer::State state) {
  RankAnswer a;
  a.rank = rank;
  a.state = state;
  a.sig.algorithm = "ring";
  return a;
}

TEST(ControlWire, TextOutsideAsciiTravelsAsQuestionMarks) {
  Message died;
  died.type = MsgType::died;
  died.rank = 1;
  died.text =
      "Verbindung wurde vom Kommunikationspartner zur\xc3\xbc"
      "ckgesetzt";
  std::string why;
  const std::optional<Message> got = round_trip(died, 2, &why);
  ASSERT_TRUE(got) << why;
  EXPECT_EQ(got->text, "Verbindung wurde vom Kommunikationspartner zur??ckgesetzt");
  EXPECT_EQ(got->rank, 1u);

  Message notice;
  notice.type = MsgType::notice;
  notice.id = 7;
  notice.seq = 3;
  notice.text = "rank 0 passed \x01 100\nelements";
  const std::optional<Message> n = round_trip(notice, 2, &why);
  ASSERT_TRUE(n) << why;
  EXPECT_EQ(n->text, "rank 0 passed ? 100\nelements");
}

TEST(ControlWire, ARankAnswersOnlyForWhatItCanKnow) {
  std::string why;
  for (auto state :
       {RankAnswer::State::entered, RankAnswer::State::not_entered, RankAnswer::State::forgotten}) {
    Message m;
    m.type = MsgType::answer;
    m.id = 1;
    m.answers = {answer(1, state)};
    EXPECT_TRUE(round_trip(m, 2, &why)) << static_cast<int>(state) << ": " << why;
  }
  // That a rank failed, left or was silent only rank 0 can say, in a report.
  for (auto state :
       {RankAnswer::State::failed, RankAnswer::State::left, RankAnswer::State::silent}) {
    Message m;
    m.type = MsgType::answer;
    m.id = 1;
    m.answers = {answer(1, state)};
    why.clear();
    EXPECT_FALSE(round_trip(m, 2, &why)) << static_cast<int>(state);
    EXPECT_NE(why.find("claims state"), std::string::npos) << why;
  }
}

// A question names the communicator as well as its context id: the id is reused after a free,
// and a rank must not answer about the newer communicator's call.
TEST(ControlWire, QueriesCarryTheCommunicatorsTag) {
  for (MsgType type : {MsgType::query, MsgType::ask}) {
    Message m;
    m.type = type;
    m.id = 4;
    m.seq = 12;
    m.tag = 0x1234567890abcdefull;
    std::string why;
    const std::optional<Message> got = round_trip(m, 2, &why);
    ASSERT_TRUE(got) << why;
    EXPECT_EQ(got->tag, m.tag);
    EXPECT_EQ(got->seq, 12u);
  }
}

TEST(ControlWire, AReportHoldsEachRanksAnswerInItsPlace) {
  Message m;
  m.type = MsgType::report;
  m.id = 9;
  m.answers = {answer(0, RankAnswer::State::entered), answer(1, RankAnswer::State::failed),
               answer(2, RankAnswer::State::silent)};
  std::string why;
  const std::optional<Message> got = round_trip(m, 3, &why);
  ASSERT_TRUE(got) << why;
  EXPECT_EQ(*got, m);
  std::swap(m.answers[1], m.answers[2]);
  why.clear();
  EXPECT_FALSE(round_trip(m, 3, &why));
  EXPECT_NE(why.find("report's answer 1 is for rank 2"), std::string::npos) << why;
}

}  // namespace
}  // namespace braid::detail::ctl
