// The one way other threads reach a client: its outbox. Any thread queues a message for the
// client (the reply that ends a blocked wait, output pushed to it, "try your request again"
// after a pause, "close"); the client's own thread receives them and acts on them.
//
// Contract for every implementation:
// - Post may be called from any thread, concurrently, at any time, including after the client
//   closed. It never blocks for long and never runs the client's code on the calling thread.
// - Messages are delivered on the client's own thread, one at a time, in the order they were
//   posted (for posts from one thread; posts from different threads in the order they queued).
// - Once the client closed, messages still queued or posted later are dropped: nothing is
//   delivered to a closed client, and nothing crashes.
//
// A ClientState gets its outbox from its connection before it is registered, and keeps it for
// its whole life (ClientState::has_outbox). In-process clients (tests calling Dispatcher::Execute)
// have none: they never block, never wait for a pause and cannot MONITOR.
#pragma once

#include <cstdint>
#include <string>

namespace gigakv::server {

struct ClientMessage {
  enum class Kind : uint8_t {
    // `bytes` is the reply that ends the client's blocked wait (served, timed out, CLIENT
    // UNBLOCK; empty under CLIENT REPLY OFF/SKIP); the commands that arrived meanwhile run then.
    kUnblockedReply,
    // `bytes` go behind the replies already queued (MONITOR's lines).
    kPushOutput,
    // Pub/Sub messages wait in the client's queue (pubsub.h): drain them into its output.
    kPubSubReady,
    // The pause the client waits for changed or ended: it tries its held request again.
    kResume,
    // Close the connection (CLIENT KILL).
    kKill,
  };
  Kind kind;
  std::string bytes;
};

class ClientOutbox {
 public:
  virtual ~ClientOutbox() = default;
  // Queues `message` for the client's own thread (see the contract above).
  virtual void Post(ClientMessage message) = 0;
};

}  // namespace gigakv::server
