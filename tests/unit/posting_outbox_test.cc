// The outbox of a client served by an I/O thread (server/net/posting_outbox.h): messages posted
// from other threads reach the receiver on the io_context's thread, in the order each thread
// posted them, batched into one hand-off per thread; a message for a receiver that is gone is
// dropped.
#include "server/net/posting_outbox.h"

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "asio.hpp"
#include "gtest/gtest.h"

namespace gigakv::server {
namespace {

using Kind = ClientMessage::Kind;

class RecordingReceiver : public OutboxReceiver {
 public:
  void OnMessage(ClientMessage message) override {
    std::lock_guard<std::mutex> lock(mutex);
    threads.push_back(std::this_thread::get_id());
    messages.push_back(std::move(message));
  }

  std::mutex mutex;
  std::vector<std::thread::id> threads;
  std::vector<ClientMessage> messages;
};

TEST(PostingOutboxTest, DeliversEveryKindInPostOrder) {
  asio::io_context io;
  auto receiver = std::make_shared<RecordingReceiver>();
  Mailbox mailbox(io);
  PostingOutbox outbox(mailbox, receiver);
  outbox.Post({Kind::kUnblockedReply, "*-1\r\n"});
  outbox.Post({Kind::kPushOutput, "+line\r\n"});
  outbox.Post({Kind::kResume, ""});
  outbox.Post({Kind::kKill, ""});
  EXPECT_TRUE(receiver->messages.empty());  // Post only queues.
  io.run();
  ASSERT_EQ(receiver->messages.size(), 4u);
  EXPECT_EQ(receiver->messages[0].kind, Kind::kUnblockedReply);
  EXPECT_EQ(receiver->messages[0].bytes, "*-1\r\n");
  EXPECT_EQ(receiver->messages[1].kind, Kind::kPushOutput);
  EXPECT_EQ(receiver->messages[1].bytes, "+line\r\n");
  EXPECT_EQ(receiver->messages[2].kind, Kind::kResume);
  EXPECT_EQ(receiver->messages[3].kind, Kind::kKill);
}

TEST(PostingOutboxTest, PostsFromOtherThreadsArriveOnTheClientThreadInOrder) {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::thread client_thread([&io] { io.run(); });
  const std::thread::id client_thread_id = client_thread.get_id();
  auto receiver = std::make_shared<RecordingReceiver>();
  Mailbox mailbox(io);
  PostingOutbox outbox(mailbox, receiver);
  constexpr int kPosters = 4;
  constexpr int kPerPoster = 2000;
  std::vector<std::thread> posters;
  for (int p = 0; p < kPosters; ++p) {
    posters.emplace_back([&outbox, p] {
      for (int i = 0; i < kPerPoster; ++i) {
        outbox.Post({Kind::kPushOutput, absl::StrCat(p, ":", i)});
      }
    });
  }
  for (std::thread& poster : posters) poster.join();
  std::promise<void> drained;
  asio::post(io, [&drained] { drained.set_value(); });  // Behind every message posted above.
  drained.get_future().wait();
  work.reset();
  client_thread.join();

  ASSERT_EQ(receiver->messages.size(), static_cast<size_t>(kPosters * kPerPoster));
  std::map<int, int> next;  // Poster -> the index its next message must have.
  for (size_t m = 0; m < receiver->messages.size(); ++m) {
    EXPECT_EQ(receiver->threads[m], client_thread_id);
    std::vector<std::string> parts = absl::StrSplit(receiver->messages[m].bytes, ':');
    ASSERT_EQ(parts.size(), 2u);
    int poster = 0, index = 0;
    ASSERT_TRUE(absl::SimpleAtoi(parts[0], &poster));
    ASSERT_TRUE(absl::SimpleAtoi(parts[1], &index));
    EXPECT_EQ(index, next[poster]++) << "poster " << poster;
  }
  for (int p = 0; p < kPosters; ++p) EXPECT_EQ(next[p], kPerPoster);
}

TEST(PostingOutboxTest, MessagesForAReceiverThatIsGoneAreDropped) {
  asio::io_context io;
  auto receiver = std::make_shared<RecordingReceiver>();
  std::weak_ptr<RecordingReceiver> watch = receiver;
  Mailbox mailbox(io);
  PostingOutbox outbox(mailbox, receiver);
  outbox.Post({Kind::kUnblockedReply, "queued before it closed"});
  receiver.reset();  // The connection closed and was destroyed.
  ASSERT_TRUE(watch.expired());
  outbox.Post({Kind::kKill, "posted after"});
  EXPECT_EQ(io.run(), 1u);  // One hand-off for both, which delivered nothing.
}

TEST(PostingOutboxTest, OneHandOffCarriesEverythingQueuedForTheThread) {
  asio::io_context io;
  Mailbox mailbox(io);
  auto first = std::make_shared<RecordingReceiver>();
  auto second = std::make_shared<RecordingReceiver>();
  PostingOutbox to_first(mailbox, first), to_second(mailbox, second);
  for (int i = 0; i < 100; ++i) {
    to_first.Post({Kind::kPubSubReady, ""});
    to_second.Post({Kind::kPushOutput, absl::StrCat(i)});
  }
  EXPECT_EQ(io.run(), 1u);
  EXPECT_EQ(first->messages.size(), 100u);
  ASSERT_EQ(second->messages.size(), 100u);
  EXPECT_EQ(second->messages[99].bytes, "99");
  // Posted again once delivered: a new hand-off.
  to_first.Post({Kind::kResume, ""});
  io.restart();
  EXPECT_EQ(io.run(), 1u);
  EXPECT_EQ(first->messages.back().kind, Kind::kResume);
}

}  // namespace
}  // namespace gigakv::server
