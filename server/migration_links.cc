#include "server/migration_links.h"

#include <utility>

#include "gigakv/strings.h"

namespace gigakv::server {
namespace {

std::string LinkName(std::string_view host, std::string_view port) {
  return StrCat(host, ":", port);
}

// C's atoi: optional blanks and sign, then the leading digits; 0 when there are none.
int AtoiPort(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || (text[i] >= '\t' && text[i] <= '\r'))) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  int64_t value = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && value < (1 << 20); ++i) {
    value = value * 10 + (text[i] - '0');
  }
  return static_cast<int>(negative ? -value : value);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MigrationLinks::Link>> MigrationLinks::Checkout(
    std::string_view host, std::string_view port, int64_t timeout_ms, int64_t now_s) {
  const std::string name = LinkName(host, port);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = links_.find(name); it != links_.end()) {
      std::unique_ptr<Link> link = std::move(it->second);
      links_.erase(it);
      link->last_use_s = now_s;
      link->connection.set_timeout_ms(timeout_ms);
      return link;
    }
  }
  // Connecting happens outside the lock: other MIGRATEs go on meanwhile.
  auto link = std::make_unique<Link>();
  link->connection.set_timeout_ms(timeout_ms);
  // Redis hands atoi(port) to getaddrinfo printed into 6 bytes ("%d" cut to 5 characters): a
  // negative number does not resolve, a longer one loses its last digits, and a number past
  // 65535 wraps as the C library's 16-bit port field does.
  const std::string printed = std::to_string(AtoiPort(port)).substr(0, 5);
  if (printed.front() == '-') return absl::NotFoundError(StrCat("invalid port ", port));
  const int port_number = std::stoi(printed) & 0xffff;
  if (absl::Status status = link->connection.Connect(std::string(host), port_number);
      !status.ok()) {
    return status;
  }
  link->last_use_s = now_s;
  return link;
}

void MigrationLinks::Return(std::string_view host, std::string_view port,
                            std::unique_ptr<Link> link, int64_t now_s) {
  link->last_use_s = now_s;
  std::unique_ptr<Link> closed;  // Destroyed (closed) after the lock is released.
  std::lock_guard<std::mutex> lock(mutex_);
  std::string name = LinkName(host, port);
  auto it = links_.find(name);
  if (it != links_.end()) {
    closed = std::exchange(it->second, std::move(link));
    return;
  }
  if (links_.size() >= kMaxLinks) {
    random_state_ ^= random_state_ << 13;
    random_state_ ^= random_state_ >> 7;
    random_state_ ^= random_state_ << 17;
    auto victim = links_.begin();
    std::advance(victim, static_cast<std::ptrdiff_t>(random_state_ % links_.size()));
    closed = std::move(victim->second);
    links_.erase(victim);
  }
  links_.emplace(std::move(name), std::move(link));
}

void MigrationLinks::CloseIdle(int64_t now_s) {
  std::vector<std::unique_ptr<Link>> closed;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = links_.begin(); it != links_.end();) {
    if (now_s - it->second->last_use_s > kIdleSeconds) {
      closed.push_back(std::move(it->second));
      links_.erase(it++);
    } else {
      ++it;
    }
  }
}

size_t MigrationLinks::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return links_.size();
}

bool IsMigrateCredential(const std::vector<std::string_view>& args, size_t index) {
  if (args.empty() || !EqualsIgnoreCase(args[0], "migrate")) return false;
  for (size_t i = 6; i < args.size() && i < index; ++i) {
    const size_t more = args.size() - 1 - i;
    if (EqualsIgnoreCase(args[i], "copy") || EqualsIgnoreCase(args[i], "replace")) continue;
    if (EqualsIgnoreCase(args[i], "auth") && more >= 1) {
      if (index == i + 1) return true;
      ++i;
    } else if (EqualsIgnoreCase(args[i], "auth2") && more >= 2) {
      if (index == i + 1 || index == i + 2) return true;
      i += 2;
    } else {
      return false;  // KEYS, or a syntax error: the parser stops there.
    }
  }
  return false;
}

}  // namespace gigakv::server
