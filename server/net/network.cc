#include "server/net/network.h"

#include <signal.h>

#include <algorithm>
#include <future>
#include <string>
#include <thread>

#include "asio.hpp"
#include "server/aof.h"
#include "server/net/io_thread.h"
#include "server/net/listener.h"
#include "server/scripting.h"
#include "server/transaction.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {

struct Network::Impl {
  explicit Impl(Server& server) : server(server) {}

  Server& server;
  std::vector<std::unique_ptr<IoThread>> threads;
  std::unique_ptr<Listener> listener;  // After `threads`: destroyed before their io_contexts.
  std::unique_ptr<asio::signal_set> signals;
  std::atomic<bool> stopped{false};
};

Network::Network(Server& server) : impl_(std::make_unique<Impl>(server)) {}

Network::~Network() {
  Stop();
  Wait();
}

int Network::port() const { return impl_->listener != nullptr ? impl_->listener->port() : 0; }

// SIGTERM / SIGINT: shut down as shutdown-on-sigterm / shutdown-on-sigint say (default: save
// when save points are set). A failed final save keeps the server running, as in Redis, unless
// the directive says force; the next signal tries again.
void Network::WaitForSignal() {
  impl_->signals->async_wait([this](const asio::error_code& ec, int signal) {
    if (ec) return;
    const bool sigint = signal == SIGINT;
    spdlog::warn("Received {} scheduling shutdown...", sigint ? "SIGINT" : "SIGTERM");
    Settings& settings = impl_->server.settings();
    const std::string flags =
        sigint ? settings.shutdown_on_sigint.get() : settings.shutdown_on_sigterm.get();
    const bool save =
        flags.find("nosave") == std::string::npos && flags.find("save") != std::string::npos;
    const bool nosave = flags.find("nosave") != std::string::npos;
    const bool force = flags.find("force") != std::string::npos;
    spdlog::warn("User requested shutdown...");
    absl::Status status = impl_->server.aof().PrepareShutdown(force);
    if (status.ok()) status = impl_->server.snapshots().PrepareShutdown(save, nosave);
    if (!status.ok() && !force) {
      spdlog::warn("Errors trying to shut down the server. Check the logs for more information.");
      WaitForSignal();
      return;
    }
    impl_->server.lifecycle().RequestShutdown();
  });
}

absl::Status Network::Start() {
  int count = static_cast<int>(impl_->server.settings().io_threads);
  for (int i = 0; i < std::max(1, count); ++i) {
    auto thread = std::make_unique<IoThread>(impl_->server);
    if (absl::Status status = thread->OpenReadySet(); !status.ok()) return status;
    impl_->threads.push_back(std::move(thread));
  }
  impl_->listener = std::make_unique<Listener>(impl_->server, impl_->threads);
  absl::Status status = impl_->listener->Bind();
  if (!status.ok()) {
    impl_->listener.reset();  // Its sockets belong to the first thread's io_context.
    impl_->threads.clear();
    return status;
  }
  impl_->server.lifecycle().tcp_port = impl_->listener->port();
  impl_->listener->StartAccepting();
  // A busy script on the first thread keeps its io_context from accepting: its hook accepts.
  impl_->threads[0]->SetAcceptWhileBusy([this] {
    if (impl_->listener && !impl_->stopped.load()) impl_->listener->AcceptPending();
  });
  impl_->signals = std::make_unique<asio::signal_set>(impl_->threads[0]->io, SIGINT, SIGTERM);
  WaitForSignal();
  impl_->server.lifecycle().set_on_shutdown([this] { Stop(); });
  impl_->server.config().AddApplier([this](std::string_view name) -> absl::Status {
    if (name != "port" && name != "bind") return absl::OkStatus();
    if (impl_->stopped.load()) return absl::OkStatus();
    asio::io_context& io = impl_->threads[0]->io;
    if (io.get_executor().running_in_this_thread()) return impl_->listener->Rebind(name);
    // CONFIG SET runs on some I/O thread; the acceptors belong to thread 0, which may be
    // waiting for this thread's gate slot (transaction.h): give it up while waiting. Inside EXEC
    // this thread holds every slot, so thread 0 may never get to run the rebind.
    if (TransactionGate::ThisThreadIsExclusive()) {
      return absl::FailedPreconditionError(
          "changing port or bind inside MULTI/EXEC is only possible on the first I/O thread");
    }
    std::promise<absl::Status> done;
    std::string changed(name);
    asio::post(io, [this, &done, changed] { done.set_value(impl_->listener->Rebind(changed)); });
    TransactionGate::ReleasedScope released;
    return done.get_future().get();
  });
  for (auto& thread : impl_->threads) {
    thread->StartWatching();
    IoThread* raw = thread.get();
    TransactionGate* gate = &impl_->server.transaction_gate();
    thread->thread = std::thread([raw, gate] {
      gate->RegisterThisThread();  // Its batches of commands then wait for a running EXEC.
      SetServeWhileBusy([](void* thread) { static_cast<IoThread*>(thread)->ServeWhileBusy(); },
                        raw);
      auto guard = asio::make_work_guard(raw->io);
      raw->io.run();
    });
  }
  return absl::OkStatus();
}

void Network::Stop() {
  if (impl_->stopped.exchange(true)) return;
  for (auto& thread : impl_->threads) {
    IoThread* raw = thread.get();
    asio::post(raw->io, [this, raw] {
      if (raw == impl_->threads[0].get()) {
        asio::error_code ec;
        if (impl_->listener) impl_->listener->Close();
        if (impl_->signals) impl_->signals->cancel(ec);
      }
      raw->Shutdown();
    });
  }
}

void Network::Wait() {
  for (auto& thread : impl_->threads) {
    if (thread->thread.joinable() && thread->thread.get_id() != std::this_thread::get_id()) {
      thread->thread.join();
    }
  }
}

}  // namespace gigakv::server
