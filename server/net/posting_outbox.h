// The outbox of a client served by an I/O thread: Post queues the message in the thread's
// mailbox, and that thread hands it to the receiver (the connection) if the receiver still
// exists then.
//
// The mailbox batches: a Post appends under the mailbox's mutex and only the first Post into an
// empty mailbox posts a handler to the thread's io_context, which then delivers everything queued
// meanwhile. A PUBLISH to a thousand subscribers of one thread so costs one wake-up of that
// thread, not a thousand handlers.
//
// Contract (see server/client_outbox.h): Post is thread-safe and only queues; messages reach
// OnMessage on the io_context's thread in the order they were queued; a message for a receiver
// already destroyed is dropped. A receiver that closed but still exists drops messages itself
// (OnMessage). The mailbox and its io_context must outlive every Post: the network stops and
// joins its threads before it destroys them, and no message is posted after that.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "asio.hpp"
#include "server/client_outbox.h"

namespace gigakv::server {

class OutboxReceiver {
 public:
  virtual ~OutboxReceiver() = default;
  // Runs on the thread of the io_context the outbox posts to.
  virtual void OnMessage(ClientMessage message) = 0;
};

// One per I/O thread.
class Mailbox {
 public:
  explicit Mailbox(asio::io_context& io) : io_(io) {}
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // On the io_context's thread: delivers what is queued now, ahead of the hand-off (the thread
  // does so each round, so that messages for its own clients go out with that round's replies).
  void DeliverPending() { Deliver(); }

  // Any thread.
  void Post(const std::weak_ptr<OutboxReceiver>& receiver, ClientMessage message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queued_.emplace_back(receiver, std::move(message));
      has_queued_.store(true, std::memory_order_release);
      if (scheduled_) return;
      scheduled_ = true;
    }
    asio::post(io_, [this] {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        scheduled_ = false;  // Posts from now on need a hand-off of their own.
      }
      Deliver();
    });
  }

 private:
  // On the io_context's thread.
  void Deliver() {
    // Most rounds have nothing: one load, no lock.
    if (!has_queued_.load(std::memory_order_acquire)) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      has_queued_.store(false, std::memory_order_relaxed);
      if (queued_.empty()) return;
      delivering_.swap(queued_);
    }
    for (auto& [receiver, message] : delivering_) {
      if (std::shared_ptr<OutboxReceiver> alive = receiver.lock()) {
        alive->OnMessage(std::move(message));
      }
    }
    delivering_.clear();
  }

  asio::io_context& io_;
  std::mutex mutex_;
  std::vector<std::pair<std::weak_ptr<OutboxReceiver>, ClientMessage>> queued_;  // mutex_.
  bool scheduled_ = false;                                                       // mutex_.
  std::atomic<bool> has_queued_{false};  // queued_ may be non-empty (set under mutex_).
  // Deliver's own (the thread's), kept for its capacity.
  std::vector<std::pair<std::weak_ptr<OutboxReceiver>, ClientMessage>> delivering_;
};

class PostingOutbox final : public ClientOutbox {
 public:
  PostingOutbox(Mailbox& mailbox, std::weak_ptr<OutboxReceiver> receiver)
      : mailbox_(mailbox), receiver_(std::move(receiver)) {}

  void Post(ClientMessage message) override { mailbox_.Post(receiver_, std::move(message)); }

 private:
  Mailbox& mailbox_;
  const std::weak_ptr<OutboxReceiver> receiver_;
};

}  // namespace gigakv::server
