#include "persistence/log/log_check.h"

#include <cctype>
#include <cstdio>

#include "gigakv/strings.h"
#include "persistence/log/log_record.h"

namespace gigakv::persistence::log {

namespace {

// An argument as redis-cli would need it typed: bare when plain, else quoted with escapes.
void AppendArgument(std::string_view arg, std::string* out) {
  bool plain = !arg.empty();
  for (char c : arg) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (!std::isprint(u) || std::isspace(u) || c == '"' || c == '\'' || c == '\\') plain = false;
  }
  if (plain) {
    out->append(arg);
    return;
  }
  out->push_back('"');
  for (char c : arg) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (std::isprint(u)) {
      out->push_back(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", u);
      out->append(hex);
    }
  }
  out->push_back('"');
}

}  // namespace

LogCheckResult CheckLog(SequentialFile& file, std::string* dump) {
  LogCheckResult result;
  LogReader reader(&file);
  DecodedRecord decoded;
  std::string scratch;
  std::string_view payload;
  while ((result.outcome = reader.ReadRecord(&payload, &scratch)) == LogReader::Outcome::kRecord) {
    if (absl::Status status = DecodeRecord(payload, &decoded); !status.ok()) {
      result.outcome = LogReader::Outcome::kCorruption;
      result.problem_offset = reader.record_offset();
      result.problem = std::string(status.message());
      result.valid_end = reader.record_offset();
      return result;
    }
    ++result.records;
    if (decoded.kind == RecordKind::kTimestamp) {
      if (dump != nullptr) StrAppend(dump, "timestamp ", decoded.unix_seconds, "\n");
      continue;
    }
    const bool transaction = decoded.kind == RecordKind::kTransaction;
    if (dump != nullptr && transaction) dump->append("MULTI\n");
    for (const DecodedEffect& effect : decoded.effects_view()) {
      ++result.effects;
      std::string name(effect.args[0]);
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      ++result.per_command[name];
      if (dump != nullptr) {
        StrAppend(dump, "db ", effect.db, ":");
        for (std::string_view arg : effect.args) {
          dump->push_back(' ');
          AppendArgument(arg, dump);
        }
        dump->push_back('\n');
      }
    }
    if (dump != nullptr && transaction) dump->append("EXEC\n");
  }
  result.valid_end = reader.valid_end();
  if (result.outcome == LogReader::Outcome::kIoError) {
    result.problem = std::string(reader.io_status().message());
  } else if (result.outcome != LogReader::Outcome::kEnd) {
    result.problem_offset = reader.problem_offset();
    result.problem = reader.problem();
  }
  return result;
}

RedisAofCheckResult CheckRedisAof(SequentialFile& file, uint64_t offset, uint64_t file_size,
                                  std::string* dump) {
  RedisAofCheckResult result;
  RedisAofReader reader(&file, offset, file_size);
  std::vector<std::string_view> args;
  bool in_multi = false;
  uint64_t before_multi = offset;
  uint64_t previous_end = offset;
  RedisAofReader::Outcome outcome;
  while ((outcome = reader.ReadCommand(&args)) == RedisAofReader::Outcome::kCommand) {
    std::string name(args[0]);
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name == "MULTI" && !in_multi) {
      in_multi = true;
      before_multi = previous_end;
    } else if (name == "EXEC") {
      in_multi = false;
    }
    ++result.commands;
    ++result.per_command[name];
    if (dump != nullptr) {
      for (size_t i = 0; i < args.size(); ++i) {
        if (i > 0) dump->push_back(' ');
        AppendArgument(args[i], dump);
      }
      dump->push_back('\n');
    }
    previous_end = reader.valid_end();
  }
  result.outcome = outcome;
  result.valid_end = reader.valid_end();
  result.problem_offset = reader.problem_offset();
  result.problem = outcome == RedisAofReader::Outcome::kIoError
                       ? std::string(reader.io_status().message())
                       : reader.problem();
  if (in_multi && (outcome == RedisAofReader::Outcome::kEnd ||
                   outcome == RedisAofReader::Outcome::kTruncated)) {
    result.outcome = RedisAofReader::Outcome::kTruncated;
    if (outcome == RedisAofReader::Outcome::kEnd) {
      result.problem_offset = before_multi;
      result.problem = "a MULTI without its EXEC";
    }
    result.valid_end = before_multi;
  }
  return result;
}

}  // namespace gigakv::persistence::log
