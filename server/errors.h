// Every error text gigakv sends, in one place, word for word as Redis 7.0 sends them. Texts are
// the whole line after '-' (error code included). Texts with a "%s" are absl::StrFormat formats.
#pragma once

#include <string_view>

namespace gigakv::errors {

inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kSortScoreNotDouble =
    "ERR One or more scores can't be converted into double";
inline constexpr std::string_view kUnblockedByClient =
    "UNBLOCKED client unblocked via CLIENT UNBLOCK";
inline constexpr std::string_view kUnblockReason =
    "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kIncrFloatNanOrInf =
    "ERR increment would produce NaN or Infinity";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
inline constexpr std::string_view kSameObject = "ERR source and destination objects are the same";
inline constexpr std::string_view kStringTooLong =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
inline constexpr std::string_view kOffsetOutOfRange = "ERR offset is out of range";
inline constexpr std::string_view kNoAuth = "NOAUTH Authentication required.";
inline constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";
inline constexpr std::string_view kAuthNotConfigured =
    "ERR AUTH <password> called without any password configured for the default user. Are you "
    "sure your configuration is correct?";
inline constexpr std::string_view kMaxClients = "ERR max number of clients reached";
inline constexpr std::string_view kBgsaveInProgress = "ERR Background save already in progress";
inline constexpr std::string_view kBgsaveWhileAofRewrite =
    "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in "
    "order to schedule a BGSAVE whenever possible.";
inline constexpr std::string_view kAofRewriteInProgress =
    "ERR Background append only file rewriting already in progress";
inline constexpr std::string_view kAofRewriteFailed =
    "ERR Can't execute an AOF background rewriting. Please check the server logs for more "
    "information.";
inline constexpr std::string_view kMisconf =
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
    "disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB "
    "error.";
// Followed by the failure's reason (strerror's text), as Redis's writeCommandsDeniedByDiskError.
inline constexpr std::string_view kMisconfAofPrefix = "MISCONF Errors writing to the AOF file: ";
inline constexpr std::string_view kLoading = "LOADING Redis is loading the dataset in memory";
inline constexpr std::string_view kOom = "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr std::string_view kNoProto = "NOPROTO unsupported protocol version";
inline constexpr std::string_view kProtoVersionNotInteger =
    "ERR Protocol version is not an integer or out of range";
inline constexpr std::string_view kTimeoutNotFloat = "ERR timeout is not a float or out of range";
inline constexpr std::string_view kTimeoutNegative = "ERR timeout is negative";
inline constexpr std::string_view kReplicaKeyspace = "ERR Replica can't interact with the keyspace";
inline constexpr std::string_view kMonitorDenyBlocking =
    "ERR MONITOR isn't allowed for DENY BLOCKING client";
inline constexpr std::string_view kPauseMode = "ERR CLIENT PAUSE mode must be WRITE or ALL";
inline constexpr std::string_view kTimeoutNotInteger =
    "ERR timeout is not an integer or out of range";
inline constexpr std::string_view kNoConfigFile = "ERR The server is running without a config file";
inline constexpr std::string_view kClientNameSpaces =
    "ERR Client names cannot contain spaces, newlines or special characters.";
inline constexpr std::string_view kNoSuchClient = "ERR No such client";
inline constexpr std::string_view kClientInfoChars =
    "ERR %s cannot contain spaces, newlines or special characters.";
inline constexpr std::string_view kExpireInvalid = "ERR invalid expire time in '%s' command";
inline constexpr std::string_view kUnknownCommand =
    "ERR unknown command '%s', with args beginning with: %s";
inline constexpr std::string_view kUnknownSubcommand = "ERR unknown subcommand '%s'. Try %s HELP.";
inline constexpr std::string_view kSubcommandSyntax =
    "ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP.";
inline constexpr std::string_view kWrongArity = "ERR wrong number of arguments for '%s' command";
inline constexpr std::string_view kConfigSetUnknown =
    "ERR Unknown option or number of arguments for CONFIG SET - '%s'";
inline constexpr std::string_view kConfigSetFailed =
    "ERR CONFIG SET failed (possibly related to argument '%s') - %s";
inline constexpr std::string_view kConfigSetDuplicate =
    "ERR CONFIG SET failed (possibly related to argument '%s') - duplicate parameter";
inline constexpr std::string_view kNxXxGtLt =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
inline constexpr std::string_view kGtLtNx =
    "ERR GT, LT, and/or NX options at the same time are not compatible";
inline constexpr std::string_view kInvalidCursor = "ERR invalid cursor";
inline constexpr std::string_view kUnknownType = "ERR unknown type name '%s'";
inline constexpr std::string_view kResetInMulti = "ERR RESET inside MULTI is not allowed";

// Bitmaps (bitops.c).
inline constexpr std::string_view kBitOffset = "ERR bit offset is not an integer or out of range";
inline constexpr std::string_view kBitValue = "ERR bit is not an integer or out of range";
inline constexpr std::string_view kBitArgument = "ERR The bit argument must be 1 or 0.";
inline constexpr std::string_view kBitopNot =
    "ERR BITOP NOT must be called with a single source key.";
inline constexpr std::string_view kBitfieldType =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
    "i64 is.";
inline constexpr std::string_view kOverflowType = "ERR Invalid OVERFLOW type specified";
inline constexpr std::string_view kBitfieldRo = "ERR BITFIELD_RO only supports the GET subcommand";

// Hashes (t_hash.c).
inline constexpr std::string_view kHashNotInteger = "ERR hash value is not an integer";
inline constexpr std::string_view kHashNotFloat = "ERR hash value is not a float";
inline constexpr std::string_view kNanOrInfinity = "ERR value is NaN or Infinity";
// HRANDFIELD's count: the range check of getRangeLongFromObjectOrReply, and the WITHVALUES bound.
inline constexpr std::string_view kCountOutOfRange =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
inline constexpr std::string_view kValueOutOfRange = "ERR value is out of range";
// Sets (t_set.c), also used by the list and sorted-set families.
inline constexpr std::string_view kMustBePositive = "ERR value is out of range, must be positive";
inline constexpr std::string_view kNumkeysPositive = "ERR numkeys should be greater than 0";
inline constexpr std::string_view kNumkeysTooMany =
    "ERR Number of keys can't be greater than number of args";
inline constexpr std::string_view kLimitNegative = "ERR LIMIT can't be negative";
// Lists (t_list.c).
inline constexpr std::string_view kIndexOutOfRange = "ERR index out of range";
inline constexpr std::string_view kLposRankZero =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
    "negative to start from the end of the list";
inline constexpr std::string_view kLposCountNegative = "ERR COUNT can't be negative";
inline constexpr std::string_view kLposMaxlenNegative = "ERR MAXLEN can't be negative";
inline constexpr std::string_view kCountPositive = "ERR count should be greater than 0";
// Sorted sets (t_zset.c).
inline constexpr std::string_view kZAddXxNx =
    "ERR XX and NX options at the same time are not compatible";
inline constexpr std::string_view kZAddIncrPair =
    "ERR INCR option supports a single increment-element pair";
inline constexpr std::string_view kZAddNan = "ERR resulting score is not a number (NaN)";
inline constexpr std::string_view kMinMaxNotFloat = "ERR min or max is not a float";
inline constexpr std::string_view kMinMaxNotLexRange = "ERR min or max not valid string range item";
inline constexpr std::string_view kZRangeLimit =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
inline constexpr std::string_view kZRangeWithscoresBylex =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
inline constexpr std::string_view kAtLeastOneKey =
    "ERR at least 1 input key is needed for '%s' command";
inline constexpr std::string_view kWeightNotFloat = "ERR weight value is not a float";
// Transactions (multi.c, server.c).
inline constexpr std::string_view kMultiNested = "ERR MULTI calls can not be nested";
inline constexpr std::string_view kExecWithoutMulti = "ERR EXEC without MULTI";
inline constexpr std::string_view kDiscardWithoutMulti = "ERR DISCARD without MULTI";
inline constexpr std::string_view kWatchInsideMulti = "ERR WATCH inside MULTI is not allowed";
inline constexpr std::string_view kExecAbort =
    "EXECABORT Transaction discarded because of previous errors.";
inline constexpr std::string_view kNotAllowedInMulti =
    "ERR Command not allowed inside a transaction";
// Pub/Sub (server.c): a RESP2 client in subscribed mode runs only these commands.
inline constexpr std::string_view kSubscribedContext =
    "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
    "allowed in this context";
// DEBUG while enable-debug-command is "no" (or "local" and the client is not local).
inline constexpr std::string_view kDebugNotAllowed =
    "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you "
    "can run it from a local connection, otherwise you need to set this option in the "
    "configuration file, and then restart the server.";

// DUMP / RESTORE / MIGRATE (cluster.c).
inline constexpr std::string_view kBusyKey = "BUSYKEY Target key name already exists.";
inline constexpr std::string_view kBusyScript =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
inline constexpr std::string_view kBusyFunction =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
inline constexpr std::string_view kBadDumpPayload =
    "ERR DUMP payload version or checksum are wrong";
inline constexpr std::string_view kBadDataFormat = "ERR Bad data format";
inline constexpr std::string_view kMigrateKeysNeedEmptyKey =
    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string";
// Sic: Redis says "the client" for the target it could not connect to.
inline constexpr std::string_view kMigrateConnect =
    "IOERR error or timeout connecting to the client";
inline constexpr std::string_view kMigrateWriting =
    "IOERR error or timeout writing to target instance";
inline constexpr std::string_view kMigrateReading =
    "IOERR error or timeout reading to target instance";
inline constexpr std::string_view kMigrateTargetError = "ERR Target instance replied with error: ";

// Client-side caching (CLIENT TRACKING / CACHING).
inline constexpr std::string_view kTrackingOneRedirect =
    "ERR A client can only redirect to a single other client";
inline constexpr std::string_view kTrackingNoSuchRedirect =
    "ERR The client ID you want redirect to does not exist";
inline constexpr std::string_view kTrackingPrefixNeedsBcast =
    "ERR PREFIX option requires BCAST mode to be enabled";
inline constexpr std::string_view kTrackingBcastSwitch =
    "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then "
    "re-enabling it with a different mode.";
inline constexpr std::string_view kTrackingOptBcast =
    "ERR OPTIN and OPTOUT are not compatible with BCAST";
inline constexpr std::string_view kTrackingOptBoth =
    "ERR You can't specify both OPTIN mode and OPTOUT mode";
inline constexpr std::string_view kTrackingOptSwitch =
    "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
    "re-enabling it with a different mode.";
// %s: the prefix given, then the one it overlaps.
inline constexpr std::string_view kTrackingPrefixOverlapsExisting =
    "ERR Prefix '%s' overlaps with an existing prefix '%s'. Prefixes for a single client must "
    "not overlap.";
inline constexpr std::string_view kTrackingPrefixOverlapsGiven =
    "ERR Prefix '%s' overlaps with another provided prefix '%s'. Prefixes for a single client "
    "must not overlap.";
inline constexpr std::string_view kCachingNotTracking =
    "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
    "OPTOUT mode enabled";
inline constexpr std::string_view kCachingYesNotOptIn =
    "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
inline constexpr std::string_view kCachingNoNotOptOut =
    "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";

// HyperLogLog and geo (hll_commands.cc, geo_commands.cc).
inline constexpr std::string_view kNotHll =
    "WRONGTYPE Key is not a valid HyperLogLog string value.";
inline constexpr std::string_view kCorruptHll = "INVALIDOBJ Corrupted HLL object detected";
inline constexpr std::string_view kGeoBadUnit =
    "ERR unsupported unit provided. please use M, KM, FT, MI";
inline constexpr std::string_view kGeoBadLonLat = "ERR invalid longitude,latitude pair %f,%f";
inline constexpr std::string_view kGeoNeedRadius = "ERR need numeric radius";
inline constexpr std::string_view kGeoNegativeRadius = "ERR radius cannot be negative";
inline constexpr std::string_view kGeoNeedWidth = "ERR need numeric width";
inline constexpr std::string_view kGeoNeedHeight = "ERR need numeric height";
inline constexpr std::string_view kGeoNegativeBox = "ERR height or width cannot be negative";
inline constexpr std::string_view kGeoBadMember = "ERR could not decode requested zset member";
inline constexpr std::string_view kGeoCountNotPositive = "ERR COUNT must be > 0";
inline constexpr std::string_view kGeoAnyNeedsCount =
    "ERR the ANY argument requires COUNT argument";
inline constexpr std::string_view kGeoStoreWithOptions =
    "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options";
inline constexpr std::string_view kGeoNeedFrom =
    "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s";
inline constexpr std::string_view kGeoNeedShape =
    "ERR exactly one of BYRADIUS and BYBOX can be specified for %s";

// Streams (stream_commands.cc).
inline constexpr std::string_view kStreamInvalidId =
    "ERR Invalid stream ID specified as stream command argument";
inline constexpr std::string_view kStreamMaxlenAndMinid =
    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
inline constexpr std::string_view kStreamMaxlenNegative = "ERR The MAXLEN argument must be >= 0.";
inline constexpr std::string_view kStreamLimitNegative = "ERR The LIMIT argument must be >= 0.";
inline constexpr std::string_view kStreamLimitWithoutStrategy =
    "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy";
inline constexpr std::string_view kStreamXtrimNeedsStrategy =
    "ERR syntax error, XTRIM must be called with a trimming strategy";
inline constexpr std::string_view kStreamLimitWithoutApprox =
    "ERR syntax error, LIMIT cannot be used without the special ~ option";
inline constexpr std::string_view kStreamXaddIdZero =
    "ERR The ID specified in XADD must be greater than 0-0";
inline constexpr std::string_view kStreamExhausted =
    "ERR The stream has exhausted the last possible ID, unable to add more items";
inline constexpr std::string_view kStreamXaddIdSmall =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
inline constexpr std::string_view kStreamTooLarge = "ERR Elements are too large to be stored";
inline constexpr std::string_view kStreamInvalidStart = "ERR invalid start ID for the interval";
inline constexpr std::string_view kStreamInvalidEnd = "ERR invalid end ID for the interval";
inline constexpr std::string_view kStreamEntriesAddedNegative =
    "ERR entries_added must be positive";
inline constexpr std::string_view kStreamSetIdBelowMaxDeleted =
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id";
inline constexpr std::string_view kStreamSetIdBelowTop =
    "ERR The ID specified in XSETID is smaller than the target stream top item";
inline constexpr std::string_view kStreamEntriesAddedBelowLength =
    "ERR The entries_added specified in XSETID is smaller than the target stream length";
inline constexpr std::string_view kStreamEntriesReadNegative =
    "ERR value for ENTRIESREAD must be positive or -1";
inline constexpr std::string_view kStreamXgroupNeedsKey =
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
    "use the MKSTREAM option to create an empty stream automatically.";
inline constexpr std::string_view kStreamNoGroupForKey =
    "NOGROUP No such consumer group '%s' for key name '%s'";
inline constexpr std::string_view kStreamBusyGroup = "BUSYGROUP Consumer Group name already exists";
inline constexpr std::string_view kStreamNoKeyOrGroup =
    "NOGROUP No such key '%s' or consumer group '%s'";
inline constexpr std::string_view kStreamNoGroupInXreadgroup =
    "NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option";
// A blocked XREADGROUP whose stream was deleted or overwritten, or whose group was destroyed
// (Redis's serveClientsBlockedOnStreamKey and unblockDeletedStreamReadgroupClients).
inline constexpr std::string_view kStreamBlockedKeyDeleted =
    "UNBLOCKED the stream key no longer exists";
inline constexpr std::string_view kStreamBlockedGroupDestroyed =
    "NOGROUP the consumer group this client was blocked on no longer exists";
inline constexpr std::string_view kStreamXclaimMinIdle =
    "ERR Invalid min-idle-time argument for XCLAIM";
inline constexpr std::string_view kStreamXclaimIdle = "ERR Invalid IDLE option argument for XCLAIM";
inline constexpr std::string_view kStreamXclaimTime = "ERR Invalid TIME option argument for XCLAIM";
inline constexpr std::string_view kStreamXclaimRetryCount =
    "ERR Invalid RETRYCOUNT option argument for XCLAIM";
inline constexpr std::string_view kStreamXclaimOption = "ERR Unrecognized XCLAIM option '%s'";
inline constexpr std::string_view kStreamXautoclaimMinIdle =
    "ERR Invalid min-idle-time argument for XAUTOCLAIM";
inline constexpr std::string_view kStreamCountNotPositive = "ERR COUNT must be > 0";
inline constexpr std::string_view kStreamCountTooHigh =
    "ERR Insufficient memory, failed allocating transient memory, COUNT too high.";
inline constexpr std::string_view kStreamBlockFromScript =
    "ERR %s command is not allowed with BLOCK option from scripts";
inline constexpr std::string_view kStreamUnbalanced =
    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.";
inline constexpr std::string_view kStreamGroupOnlyInXreadgroup =
    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.";
inline constexpr std::string_view kStreamNoackOnlyInXreadgroup =
    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.";
inline constexpr std::string_view kStreamMissingGroup = "ERR Missing GROUP option for XREADGROUP";
inline constexpr std::string_view kStreamDollarInXreadgroup =
    "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of "
    "this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID "
    "would just return an empty result set.";
inline constexpr std::string_view kStreamGreaterOnlyInXreadgroup =
    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
    "<consumer> option.";
}  // namespace gigakv::errors
