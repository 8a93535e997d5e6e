// The outbox of a client served by an I/O thread: Post queues the message on the thread's
// asio::io_context, and that thread hands it to the receiver (the connection) if the receiver
// still exists then.
//
// Contract (see server/client_outbox.h): Post is thread-safe and only queues; messages reach
// OnMessage on the io_context's thread in the order they were queued (an io_context run by one
// thread runs its handlers in that order); a message for a receiver already destroyed is
// dropped. A receiver that closed but still exists drops messages itself (OnMessage). The
// io_context must outlive every Post: the network stops and joins its threads before it
// destroys their io_contexts, and no message is posted after that.
#pragma once

#include <memory>
#include <utility>

#include "asio.hpp"
#include "server/client_outbox.h"

namespace gigakv::server {

class OutboxReceiver {
 public:
  virtual ~OutboxReceiver() = default;
  // Runs on the thread of the io_context the outbox posts to.
  virtual void OnMessage(ClientMessage message) = 0;
};

class PostingOutbox final : public ClientOutbox {
 public:
  PostingOutbox(asio::io_context& io, std::weak_ptr<OutboxReceiver> receiver)
      : io_(io), receiver_(std::move(receiver)) {}

  void Post(ClientMessage message) override {
    asio::post(io_, [receiver = receiver_, message = std::move(message)]() mutable {
      if (std::shared_ptr<OutboxReceiver> alive = receiver.lock()) {
        alive->OnMessage(std::move(message));
      }
    });
  }

 private:
  asio::io_context& io_;
  const std::weak_ptr<OutboxReceiver> receiver_;
};

}  // namespace gigakv::server
