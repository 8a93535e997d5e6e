// The one way replies are produced. Handlers call these primitives and never look at the protocol
// version; this class alone knows RESP2 vs RESP3 and performs Redis's RESP2 downgrades:
//
//   primitive          RESP3                         RESP2
//   SimpleString(s)    +s\r\n                        same
//   Error(e)           -e\r\n                        same
//   Integer(n)         :n\r\n                        same
//   Bulk(b)            $len\r\nb\r\n                 same
//   Null()             _\r\n                         $-1\r\n
//   NullArray()        _\r\n                         *-1\r\n
//   ArrayHeader(n)     *n\r\n                        same
//   MapHeader(n)       %n\r\n  (n key/value pairs)   *2n\r\n
//   SetHeader(n)       ~n\r\n                        *n\r\n
//   PushHeader(n)      >n\r\n                        *n\r\n
//   PairArrayHeader(n) *n\r\n  (n pairs follow)      *2n\r\n (the pairs flattened)
//   PairHeader()       *2\r\n                        nothing
//   Double(d)          ,%.17g\r\n (,inf / ,-inf)     bulk "%.17g" ("inf" / "-inf")
//   Bool(b)            #t\r\n / #f\r\n               :1\r\n / :0\r\n
//   Verbatim(fmt, s)   =len\r\nfmt:s\r\n             bulk s
//   BigNumber(s)       (s\r\n                        bulk s
//
// Output accumulates in an internal buffer that the connection writes with one system call per
// batch of pipelined commands. Not thread-safe: owned by one connection.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gigakv::protocol {

class ReplyBuilder {
 public:
  explicit ReplyBuilder(int resp_version = 2) : resp_version_(resp_version) {}

  int resp_version() const { return resp_version_; }
  void set_resp_version(int version) { resp_version_ = version; }

  void SimpleString(std::string_view text);
  void Ok() { buffer_.append("+OK\r\n"); }
  // `text` is the whole error line without the leading '-', e.g. "ERR syntax error" or
  // "WRONGTYPE Operation against a key holding the wrong kind of value". CR/LF in it are replaced
  // by spaces so a reply can never break the protocol.
  void Error(std::string_view text);
  // The same, for an error the server has counted already (a script passing on the error of a
  // command it called, as Redis's ERR_REPLY_FLAG_NO_STATS_UPDATE): it fails the command
  // (errors_sent) but is not counted again in errorstats (errors_counted_elsewhere).
  void ErrorCountedElsewhere(std::string_view text) {
    Error(text);
    ++errors_counted_elsewhere_;
  }
  void Integer(int64_t value);
  // An integer given as its canonical decimal text (what Integer would write), for callers
  // that hold the digits already (INCR on the stored text).
  void IntegerText(std::string_view digits);
  void Bulk(std::string_view data);
  void Null();
  void NullArray();
  void ArrayHeader(int64_t count);
  void MapHeader(int64_t pairs);
  void SetHeader(int64_t count);
  void PushHeader(int64_t count);
  // An array of `pairs` two-element arrays (ZRANGE WITHSCORES, HRANDFIELD WITHVALUES in RESP3);
  // RESP2 flattens it, as Redis does. Each pair starts with PairHeader().
  void PairArrayHeader(int64_t pairs);
  void PairHeader();
  // A map of `pairs` keys to values in RESP3; in RESP2 an array of [key, value] two-element
  // arrays (XREAD, XREADGROUP), as Redis does. Each pair starts with KeyedPairHeader().
  void KeyedPairsHeader(int64_t pairs);
  void KeyedPairHeader();
  void Double(double value);
  // A double already formatted (Redis's addReplyHumanLongDouble: GEOPOS): a RESP3 double, a
  // bulk string in RESP2.
  void DoubleText(std::string_view text);
  void Bool(bool value);
  void Verbatim(std::string_view format, std::string_view text);
  void BigNumber(std::string_view digits);
  // Bytes already encoded as RESP (e.g. a cached reply); no conversion is applied.
  void Raw(std::string_view encoded) { buffer_.append(encoded); }

  std::string& buffer() { return buffer_; }
  const std::string& buffer() const { return buffer_; }

  // Error bookkeeping for INFO errorstats / failed_calls: counts errors since the last Take.
  int errors_sent() const { return errors_sent_; }
  int errors_counted_elsewhere() const { return errors_counted_elsewhere_; }
  const std::string& last_error_code() const { return last_error_code_; }
  void ResetErrorCount() {
    errors_sent_ = 0;
    errors_counted_elsewhere_ = 0;
  }

 private:
  void TextOrBulk(char marker, std::string_view text);
  void AppendHeader(char type, int64_t value);

  int resp_version_;
  std::string buffer_;
  int errors_sent_ = 0;
  int errors_counted_elsewhere_ = 0;
  std::string last_error_code_;
};

}  // namespace gigakv::protocol
