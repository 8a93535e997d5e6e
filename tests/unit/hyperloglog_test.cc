// Golden bytes and replies come from redis-server 7.0.15 (Debian 7.0.15-1~deb12u10, which carries
// the CVE-2025-32023 fix): PFADD / PFCOUNT / PFMERGE / PFDEBUG, then GET of the raw value.
// Elements are "e0", "e1", ... added in that order. Values too large to embed (dense, 12304
// bytes) are compared by their 64-bit FNV-1a hash.
#include "core/types/hyperloglog.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv::hll {
namespace {

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 15]);
  }
  return hex;
}

std::string Unhex(std::string_view hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return bytes;
}

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

std::string Element(int i) { return "e" + std::to_string(i); }

// PFADD of e<first> .. e<last - 1>, one element at a time.
void AddRange(std::string* value, int first, int last,
              size_t sparse_max_bytes = kDefaultSparseMaxBytes) {
  for (int i = first; i < last; ++i) ASSERT_GE(Add(value, Element(i), sparse_max_bytes), 0);
}

std::vector<uint8_t> Union(const std::vector<const std::string*>& values) {
  std::vector<uint8_t> registers(kRegisters, 0);
  for (const std::string* value : values) EXPECT_TRUE(MergeInto(*value, registers.data()));
  return registers;
}

// A sparse header with a stale cache of 0, as PFADD leaves it.
constexpr char kStaleHeader[] = "48594c4c010000000000000000000080";

constexpr char kSparse1[] = "48594c4c0100000000000000000000804525807ad8";
constexpr char kSparse10[] =
    "48594c4c010000000000000000000080452580472e844fc9804412844a5184430d844103844eb98440888040"
    "6a8441b1";
constexpr char kSparse100[] =
    "48594c4c01000000000000000000008036843c8040a9a40e88409084406c9c048840e28041358840d380411d"
    "8840898041168c419080098040e08040948041578440a280408384405d8440e1844199844081803c84404784"
    "0780404e80408f840984405184268441258440d38042638040a280404b8c406f80420b8c4179804147804163"
    "8040668440f98c0184218811804182844062803088407984228040de8440d3884045800a88420090118440c1"
    "84018041138440848c1684228040a88440e180422a84410384168041178441658c414e802680058040598040"
    "ec882e88413c880380405b841b803f80409b802184412e88408f90407e80408480415f803384407984419384"
    "4058902e80406a840d8039801380409a882880408c";
constexpr char kSparse1000[] =
    "48594c4c0100000000000000000000800584058409848110800681008414880b80198006840f801380038016"
    "84028405800c801b80038c198403888402a40e880f80058002808827801e8c0184118014840388048c028036"
    "80259c0190018805800b8807800280138016840d801e8807800c803d840f801094059888138424800b800384"
    "880d88058811880a8c1380088007801e8037880a80018004800288118040428000800a94188003800a881594"
    "0784098c0b80088001800284058801800c84801280168003800080088c088c0580018003880d880480178400"
    "8412880280404780058c0b800588128017840e800480028404801480228c0280018801900784138005800e80"
    "01840184049c1b80238015840284288040488c148088188015842f80318436800580228006841a800790019c"
    "03842c800c80108009810f8006808421801b888416808818880684058c25801080098004800b80078002800a"
    "802d801184008024800f8c34801b881a901380358025980080404b8408840b84018001840388028000800184"
    "26882c8803840b8418840684048005801c8433840580008404840a84028405840080018413800c888018801f"
    "8407840b8010883080138013800180980084048000900b943f808c00848006840c8112841184148004800484"
    "1c844050880d80008410801480108023802580008006841380128429801b848c1e8018800a80178001801484"
    "08a03d840280038437800f800084880088801d901e80088803800e841f840c80028400800194048429841080"
    "06840c840d800f848005841b851a800180078000800d801780058000800284218008841d841a80178409841c"
    "842584268028800c800180088809841180068009840884008002802a8400882c801680404280405b8c088403"
    "800a8c0884118016802e82008c0084404d980f801f840480008018800380078c1780068008800f800b881180"
    "0a8805842680049c0c801080029807840b8011800c8402800c8c168405840280079407801d881b800f8c3984"
    "0680028c098005800280028820881c8008848018841380188c1a800298008030801980048017843f80038001"
    "80018012801580008c10804040900680068415848827882b84088803800880029006801a841c881c88098c1a"
    "8403822f8c038000842a8c18803e881d842180048403800a8807802580088401800c84178016882b8c008006"
    "8832803580008017802280128c0c8014801280148c0e9c008409841f84178802840580248c039007880b800c"
    "840b8800801d80059000882780098084088c0b88038c01848000841590078808800284008801811788058402"
    "841488178812803a840880840c801c800a8c0f800f88404b8800800084068c02800480168405880b84038c1e"
    "800a841d8084258008880084048400800680008402803284058008800884128402840384058c12800a801c80"
    "04800680404484800b84078084218025841d840284238427840780088c018440438007880580088003800480"
    "2388008402800a88018008842380138010802480008003841e883480404a882b8400802f8102802a881d8015"
    "8001840e900b8c04840a8015808403880584318405800a800380258013840880008401800d80099418840884"
    "17800580028001802b802e801f80008c2a80028405840e800a8407841d800081098005800190218c16841080"
    "0f811081038815800d881880038002800f80048401880e80148007840e84008006800d8035800e8001842884"
    "118811801e80404584178c2c800d8034900b800480884060800380008011900a800180289006880e80228807"
    "840a80078009800c881080098402840b8032800b8801802c8038880e80168c0e800380098411800380178019"
    "8400881d80128410850484038c0780840d8002902284098501940f9c1e80098004841280068c1b8031802080"
    "02841b80098804842584800c8001800e8016800a800484048800841584138c07840d8001800a80098407841b"
    "8004801c840284018c30841580018c2b8c21801f84068006800a800b84078004800580840280028819840380"
    "12881b811b8026800f880b881b840f800d880b980d801a800e8000848801880a8814880c8808800180008028"
    "840b80158c208023800b8c03888406812d848006800b840280008806840884198404880380068423812d8406"
    "8c078c04800484388c8004801e88248005801d80198c118001800d8811888401901284018008842b84800080"
    "10801188404894108010800484208800848c1c880e80900380208805840580038814800c8001800c800b8002"
    "90109402800a80148006841c8003841b80028403841c800d882584048002840d840e8000801b841d80148827"
    "8c0980138c098400840b800284088c18880e84018015840f841288008403802a800c801680058006841a8880"
    "088000800a8401800288138028851a840580048c0084028c405a881b8401800e80119006800088248002841c"
    "8006800f88108410881a84068004800b8428800680138100800e90168004800484008008800a803b9407840f"
    "8407840788048007800a80049002848013880480008411801380108c1f801d801a8c008001801190880e8008"
    "800e801c841388098c088404803e";
constexpr char kPromote100Before[] =
    "48594c4c01000000000000000000008042358842ee8044528042da84450e8442958440d38043548c406f8043"
    "868042ac8041648441b884453d90118443458440e180422a8441038446cc88038045d6844079844193844088"
    "80406a8440488013804152";
constexpr char kMergeSparse[] =
    "48594c4c01000000000000000000008036843c8040a9a40e88409084406c9c048840e2804135884055800080"
    "407a80411d884089800d8441078c404684414880098040e080409480407e9040738040628440a28040838440"
    "5d8440e18407840d80415080068427844081803c844047840780404e80408f8409844043840c842684406e80"
    "407380404084409d84198019802a8441028c08844129802e88407280404b8c4052881b8040b08041598c4158"
    "8c1a840380407e8040c7800884415980406684409f8040468c108c0184218811804182844062803088407984"
    "0784198040de84404684408b8814802b8402800a8840578041a790118440a0801f84018041138440848c1684"
    "21813c88406a8440e1804147800380228040b88441038416804111800484412b80388c414e80268005800380"
    "40548040ec882e8840f680198429880380405b841b803f804044804055800d88128440d380405988408f9040"
    "7e80408480415f803384404f802884411f8040728440589022840a80406a840d8039801380409a882880408c";

// --- Format and PFADD --------------------------------------------------------------------------

TEST(HyperLogLogTest, NewSparseIsRedisEmptyValue) {
  std::string value = NewSparse();
  EXPECT_EQ(Hex(value), "48594c4c0100000000000000000000007fff");
  EXPECT_TRUE(IsValid(value));
  EXPECT_TRUE(IsSparse(value));
  EXPECT_EQ(EncodingName(value), "sparse");
  std::string text;
  ASSERT_TRUE(DebugDecode(value, &text));
  EXPECT_EQ(text, "Z:16384");
  uint64_t card = 99;
  bool updated = true;
  ASSERT_TRUE(Count(&value, &card, &updated));  // The cache (0) is valid.
  EXPECT_EQ(card, 0u);
  EXPECT_FALSE(updated);
  // PFADD of a missing key with no element: created, counted as an update, cache invalidated.
  InvalidateCache(&value);
  EXPECT_EQ(Hex(value), "48594c4c0100000000000000000000807fff");
}

TEST(HyperLogLogTest, SparseBytesAfterPfaddMatchRedis) {
  struct Case {
    int elements;
    const char* hex;
  };
  for (const Case& c :
       {Case{1, kSparse1}, Case{10, kSparse10}, Case{100, kSparse100}, Case{1000, kSparse1000}}) {
    std::string value = NewSparse();
    AddRange(&value, 0, c.elements);
    EXPECT_EQ(Hex(value), c.hex) << c.elements << " elements";
    EXPECT_TRUE(IsSparse(value));
  }
  std::string value = NewSparse();
  EXPECT_EQ(Add(&value, "e0", kDefaultSparseMaxBytes), 1);
  EXPECT_EQ(Add(&value, "e0", kDefaultSparseMaxBytes), 0);  // Unchanged: no register grows.
  EXPECT_EQ(Hex(value), kSparse1);
  std::string text;
  ASSERT_TRUE(DebugDecode(value, &text));
  EXPECT_EQ(text, "Z:1318 v:1,1 Z:15065");
  AddRange(&value, 1, 10);
  ASSERT_TRUE(DebugDecode(value, &text));
  EXPECT_EQ(text,
            "Z:1318 v:1,1 Z:1839 v:2,1 Z:4042 v:1,1 Z:1043 v:2,1 Z:2642 v:2,1 Z:782 v:2,1 Z:260 "
            "v:2,1 Z:3770 v:2,1 Z:137 v:1,1 Z:107 v:2,1 Z:434");
}

TEST(HyperLogLogTest, PromotesToDenseWhereRedisDoes) {
  // Default hll-sparse-max-bytes (3000): the element that would grow the value past 3000 bytes.
  std::string value = NewSparse();
  int i = 0;
  std::string before;
  while (IsSparse(value)) {
    before = value;
    ASSERT_GE(Add(&value, Element(i), kDefaultSparseMaxBytes), 0);
    ++i;
  }
  EXPECT_EQ(i - 1, 1683);
  EXPECT_EQ(before.size(), 3000u);
  EXPECT_EQ(Fnv1a64(before), 4331107107902166495u);
  EXPECT_EQ(value.size(), kDenseSize);
  EXPECT_EQ(EncodingName(value), "dense");
  EXPECT_EQ(Fnv1a64(value), 2161476811962665565u);

  // hll-sparse-max-bytes 0: the first split already promotes.
  value = NewSparse();
  EXPECT_EQ(Add(&value, "e0", 0), 1);
  EXPECT_FALSE(IsSparse(value));
  EXPECT_EQ(Fnv1a64(value), 449934631975613194u);

  // hll-sparse-max-bytes 100.
  value = NewSparse();
  for (i = 0; IsSparse(value); ++i) {
    before = value;
    ASSERT_EQ(Add(&value, Element(i), 100), 1);
  }
  EXPECT_EQ(i - 1, 28);
  EXPECT_EQ(Hex(before), kPromote100Before);
  EXPECT_EQ(Fnv1a64(value), 5893405359057525353u);
}

TEST(HyperLogLogTest, DenseRegistersArePackedAsRedisPacksThem) {
  // Registers 0..3 = 1, 2, 3, 4 and register 16383 = 63, read back by PFDEBUG GETREG in Redis.
  std::string value = "HYLL" + std::string(12, '\0') + std::string(12288, '\0');
  value[16] = '\x81';
  value[17] = '\x30';
  value[18] = '\x10';
  value[16 + 12287] = '\xfc';
  ASSERT_TRUE(IsValid(value));
  std::vector<uint8_t> registers(kRegisters);
  bool converted = true;
  ASSERT_TRUE(DebugGetRegisters(&value, registers.data(), &converted));
  EXPECT_FALSE(converted);
  EXPECT_EQ(std::vector<uint8_t>(registers.begin(), registers.begin() + 5),
            (std::vector<uint8_t>{1, 2, 3, 4, 0}));
  EXPECT_EQ(registers[16382], 0);
  EXPECT_EQ(registers[16383], 63);
  uint64_t card = 1;
  bool updated = true;
  ASSERT_TRUE(Count(&value, &card, &updated));  // The zero cache is valid: Redis replies 0.
  EXPECT_EQ(card, 0u);
  EXPECT_FALSE(updated);

  // PFADD e0 on an all-zero dense value: register 1318 = 1, i.e. bits 7908..7913 (byte 988).
  value = "HYLL" + std::string(12, '\0') + std::string(12288, '\0');
  EXPECT_EQ(Add(&value, "e0", kDefaultSparseMaxBytes), 1);
  EXPECT_EQ(Add(&value, "e0", kDefaultSparseMaxBytes), 0);
  std::vector<std::pair<size_t, int>> nonzero;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != 0) nonzero.emplace_back(i, static_cast<uint8_t>(value[i]));
  }
  EXPECT_EQ(nonzero, (std::vector<std::pair<size_t, int>>{
                         {0, 'H'}, {1, 'Y'}, {2, 'L'}, {3, 'L'}, {15, 0x80}, {1004, 16}}));
}

TEST(HyperLogLogTest, SparseAndDenseAgreeOnRandomElements) {
  std::mt19937_64 rng(7);
  for (size_t max_bytes : {size_t{0}, size_t{64}, size_t{500}, kDefaultSparseMaxBytes}) {
    std::string sparse = NewSparse();
    std::string dense = "HYLL" + std::string(12, '\0') + std::string(12288, '\0');
    for (int i = 0; i < 3000; ++i) {
      std::string element(rng() % 12, '\0');
      for (char& ch : element) ch = static_cast<char>(rng());
      int sparse_result = Add(&sparse, element, max_bytes);
      int dense_result = Add(&dense, element, max_bytes);
      ASSERT_EQ(sparse_result, dense_result) << i;
      ASSERT_EQ(sparse.size() <= max_bytes || !IsSparse(sparse), true);
    }
    std::vector<uint8_t> a(kRegisters, 0), b(kRegisters, 0);
    ASSERT_TRUE(MergeInto(sparse, a.data()));
    ASSERT_TRUE(MergeInto(dense, b.data()));
    EXPECT_EQ(a, b);
    uint64_t sparse_card, dense_card;
    bool updated;
    ASSERT_TRUE(Count(&sparse, &sparse_card, &updated));
    ASSERT_TRUE(Count(&dense, &dense_card, &updated));
    EXPECT_EQ(sparse_card, dense_card);
    EXPECT_EQ(CountRegisters(a.data()), dense_card);
  }
}

// --- PFCOUNT -----------------------------------------------------------------------------------

TEST(HyperLogLogTest, CountsAndCachedBytesMatchRedis) {
  struct Case {
    int elements;
    uint64_t count;
    const char* cache_hex;  // Value bytes 8..15 after PFCOUNT.
    uint64_t fnv;           // Of the whole value after PFCOUNT.
    size_t size;
  };
  const Case cases[] = {
      {1, 1, "0100000000000000", 6083543951777497178u, 21},
      {100, 100, "6400000000000000", 4674391044980292858u, 285},
      {10000, 9973, "f526000000000000", 10454009258085974068u, 12304},
      {100000, 100853, "f589010000000000", 18239510555548663395u, 12304},
      {1000000, 991657, "a9210f0000000000", 2771991971277163163u, 12304},
  };
  std::string value = NewSparse();
  int added = 0;
  for (const Case& c : cases) {
    AddRange(&value, added, c.elements);
    added = c.elements;
    uint64_t card = 0;
    bool updated = false;
    ASSERT_TRUE(Count(&value, &card, &updated));
    EXPECT_EQ(card, c.count) << c.elements;
    EXPECT_TRUE(updated);
    EXPECT_EQ(Hex(value.substr(8, 8)), c.cache_hex) << c.elements;
    EXPECT_EQ(Fnv1a64(value), c.fnv) << c.elements;
    EXPECT_EQ(value.size(), c.size) << c.elements;
    // Cached now: same answer, no change.
    ASSERT_TRUE(Count(&value, &card, &updated));
    EXPECT_EQ(card, c.count);
    EXPECT_FALSE(updated);
  }
}

TEST(HyperLogLogTest, CacheIsKeptUntilARegisterChanges) {
  std::string value = NewSparse();
  AddRange(&value, 0, 100);
  uint64_t card;
  bool updated;
  ASSERT_TRUE(Count(&value, &card, &updated));
  ASSERT_EQ(card, 100u);
  EXPECT_EQ(Add(&value, "e42", kDefaultSparseMaxBytes), 0);
  ASSERT_TRUE(CachedCardinality(value, &card));
  EXPECT_EQ(card, 100u);
  int i = 100;
  while (Add(&value, Element(i), kDefaultSparseMaxBytes) == 0) ++i;
  EXPECT_FALSE(CachedCardinality(value, &card));
  // Invalidation sets only the top bit: the old figure stays in the other bits, as in Redis.
  EXPECT_EQ(Hex(value.substr(8, 8)), "6400000000000080");

  // A valid cache is returned without decoding the body, even a corrupt one (Redis: 12345).
  std::string corrupt = Unhex(
      "48594c4c010000003930000000000000"
      "4063");
  ASSERT_TRUE(Count(&corrupt, &card, &updated));
  EXPECT_EQ(card, 12345u);
  EXPECT_FALSE(updated);
}

TEST(HyperLogLogTest, UnionCountsMatchRedis) {
  std::string a = NewSparse(), b = NewSparse(), c = NewSparse(), big = NewSparse();
  AddRange(&a, 0, 100);
  AddRange(&b, 50, 150);
  AddRange(&c, 0, 5000);
  AddRange(&big, 0, 1000000);
  EXPECT_EQ(CountRegisters(Union({&a, &b}).data()), 150u);
  EXPECT_EQ(CountRegisters(Union({&a, &c, &big}).data()), 991657u);
  EXPECT_EQ(CountRegisters(Union({}).data()), 0u);
}

// --- PFMERGE -----------------------------------------------------------------------------------

TEST(HyperLogLogTest, StoreMergedMatchesPfmerge) {
  std::string a = NewSparse(), b = NewSparse(), c = NewSparse(), ten = NewSparse();
  AddRange(&a, 0, 100);
  AddRange(&b, 50, 150);
  AddRange(&c, 0, 5000);  // Dense.
  AddRange(&ten, 0, 10);
  ASSERT_FALSE(IsSparse(c));

  // PFMERGE d1 a b: every source sparse, so the new destination stays sparse.
  std::string dest = NewSparse();
  ASSERT_TRUE(StoreMerged(&dest, Union({&a, &b}).data(), false, kDefaultSparseMaxBytes));
  EXPECT_EQ(Hex(dest), kMergeSparse);
  uint64_t card;
  bool updated;
  ASSERT_TRUE(Count(&dest, &card, &updated));
  EXPECT_EQ(card, 150u);

  // PFMERGE d2 a c: a dense source makes the destination dense first.
  dest = NewSparse();
  ASSERT_TRUE(StoreMerged(&dest, Union({&a, &c}).data(), true, kDefaultSparseMaxBytes));
  EXPECT_EQ(Hex(dest.substr(0, 16)), "48594c4c000000000000000000000080");
  EXPECT_EQ(Fnv1a64(dest), 9246530454245137114u);

  // PFMERGE d3 a where d3 holds e0..e9: the destination is also a source.
  dest = ten;
  ASSERT_TRUE(StoreMerged(&dest, Union({&dest, &a}).data(), false, kDefaultSparseMaxBytes));
  EXPECT_EQ(Hex(dest), kSparse100);

  // PFMERGE d4 (no source): an empty sketch with its cache invalidated.
  dest = NewSparse();
  ASSERT_TRUE(StoreMerged(&dest, Union({}).data(), false, kDefaultSparseMaxBytes));
  EXPECT_EQ(Hex(dest), "48594c4c0100000000000000000000807fff");

  // PFMERGE d5 a b with hll-sparse-max-bytes 100: promoted while the registers are written.
  dest = NewSparse();
  ASSERT_TRUE(StoreMerged(&dest, Union({&a, &b}).data(), false, 100));
  EXPECT_FALSE(IsSparse(dest));
  EXPECT_EQ(Fnv1a64(dest), 18089608939623590083u);
}

// --- Validation and corrupt values -------------------------------------------------------------

TEST(HyperLogLogTest, IsValidFollowsRedisTypeCheck) {
  const std::string xzero = Unhex("7fff");
  EXPECT_TRUE(IsValid(NewSparse()));
  EXPECT_TRUE(IsValid("HYLL" + std::string(12, '\0') + std::string(12288, '\0')));
  EXPECT_TRUE(IsValid(Unhex(kStaleHeader)));  // Header only: valid type, corrupt body.
  EXPECT_FALSE(IsValid(""));
  EXPECT_FALSE(IsValid("HYLL" + std::string(11, '\0')));
  EXPECT_FALSE(IsValid("HYLX" + std::string(12, '\0') + xzero));
  EXPECT_FALSE(IsValid("HYLL\x02" + std::string(11, '\0') + xzero));
  EXPECT_FALSE(IsValid("HYLL" + std::string(12, '\0') + std::string(12287, '\0')));
  EXPECT_FALSE(IsValid("HYLL" + std::string(12, '\0') + std::string(12289, '\0')));
  std::string not_hll = "plain string value";
  EXPECT_EQ(Add(&not_hll, "x", kDefaultSparseMaxBytes), -1);
}

TEST(HyperLogLogTest, CorruptSparseValuesBehaveAsInRedis) {
  struct Case {
    const char* name;
    const char* body_hex;
    const char* decoded;
    int add_e0;
    const char* after_e0;  // Body after PFADD e0 (or unchanged on error).
    const char* after_e3;
  };
  const Case cases[] = {
      // A truncated XZERO reads a 0 second byte: XZERO:16129.
      {"truncated", "7f", "Z:16129", 1, "45258079", "6d968451"},
      {"short", "7e7f", "Z:16000", 1, "4525807958", "6d968450e7"},
      {"past end", "7e7f43e7", "Z:16000 Z:1000", 1, "452580795843e7", "6d968450e743e7"},
      {"val past end", "7ffe89", "Z:16383 v:3,2", 1, "4525807ad789", "6d9684526689"},
      // The patched Redis also rejects opcodes after a complete body.
      {"trailing val", "7fff80", "Z:16384 v:1,1", 1, "4525807ad880", "6d9684526780"},
      {"header only", "", "", -1, "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string value = Unhex(std::string(kStaleHeader) + c.body_hex);
    ASSERT_TRUE(IsValid(value));
    std::string copy = value;
    uint64_t card;
    bool updated;
    EXPECT_FALSE(Count(&copy, &card, &updated));
    std::vector<uint8_t> registers(kRegisters, 0);
    EXPECT_FALSE(MergeInto(value, registers.data()));
    EXPECT_EQ(ToDense(&copy), -1);
    bool converted;
    EXPECT_FALSE(DebugGetRegisters(&copy, registers.data(), &converted));
    EXPECT_FALSE(StoreMerged(&copy, registers.data(), true, kDefaultSparseMaxBytes));
    EXPECT_EQ(copy, value);
    std::string text;
    ASSERT_TRUE(DebugDecode(value, &text));
    EXPECT_EQ(text, c.decoded);
    // PFADD still rewrites in place where it finds the register (Redis's hllSparseSet).
    EXPECT_EQ(Add(&copy, "e0", kDefaultSparseMaxBytes), c.add_e0);
    EXPECT_EQ(Hex(copy), std::string(kStaleHeader) + c.after_e0);
    copy = value;
    EXPECT_EQ(Add(&copy, "e3", kDefaultSparseMaxBytes), c.add_e0);
    EXPECT_EQ(Hex(copy), std::string(kStaleHeader) + c.after_e3);
  }

  // Redis's header example (XZERO:1000 VAL:2,1 ZERO:19 VAL:3,2 XZERO:15362) is well formed.
  const std::string value = Unhex(std::string(kStaleHeader) + "43e78412897c01");
  std::string text;
  ASSERT_TRUE(DebugDecode(value, &text));
  EXPECT_EQ(text, "Z:1000 v:2,1 z:19 v:3,2 Z:15362");
  std::string copy = value;
  uint64_t card;
  bool updated;
  ASSERT_TRUE(Count(&copy, &card, &updated));
  EXPECT_EQ(card, 3u);
  copy = value;
  EXPECT_EQ(Add(&copy, "e0", kDefaultSparseMaxBytes), 1);
  EXPECT_EQ(Hex(copy), std::string(kStaleHeader) + "43e78412894127807ad8");
  copy = value;
  EXPECT_EQ(Add(&copy, "e3", kDefaultSparseMaxBytes), 1);
  EXPECT_EQ(Hex(copy), std::string(kStaleHeader) + "43e78412896998845267");
}

// --- PFDEBUG -----------------------------------------------------------------------------------

TEST(HyperLogLogTest, DebugGetRegistersConvertsSparseKeepingTheHeader) {
  // Cache 7 (valid), XZERO:100 VAL:5,1 XZERO:16283.
  std::string value = Unhex("48594c4c0100000007000000000000004063907f9a");
  ASSERT_TRUE(IsValid(value));
  std::vector<uint8_t> registers(kRegisters, 0);
  bool converted = false;
  ASSERT_TRUE(DebugGetRegisters(&value, registers.data(), &converted));
  EXPECT_TRUE(converted);
  EXPECT_EQ(value.size(), kDenseSize);
  EXPECT_EQ(Hex(value.substr(0, 16)), "48594c4c000000000700000000000000");
  EXPECT_EQ(registers[100], 5);
  for (size_t i = 16; i < value.size(); ++i) {
    EXPECT_EQ(static_cast<uint8_t>(value[i]), i == 16 + 75 ? 5 : 0) << i;
  }
  EXPECT_EQ(EncodingName(value), "dense");
  EXPECT_EQ(ToDense(&value), 0);
  std::string text;
  EXPECT_FALSE(DebugDecode(value, &text));  // "HLL encoding is not sparse".
}

// --- Primitives --------------------------------------------------------------------------------

TEST(HyperLogLogTest, MurmurHash64AMatchesReference) {
  struct Case {
    std::string key;
    uint64_t hash;
  };
  std::string bytes23;
  for (int i = 0; i < 23; ++i) bytes23.push_back(static_cast<char>(i));
  const Case cases[] = {
      {"", 0xd8dfea6585bc9732ULL},         {"a", 0x53d2470a9b43b1a7ULL},
      {"e0", 0x4e13fe6539844526ULL},       {"hello world", 0xa919bc3051f624b7ULL},
      {"12345678", 0x95ebb86389132953ULL}, {"123456789", 0x217532cb09f2a44dULL},
      {bytes23, 0xe33f0d3409e9cce2ULL},
  };
  for (const Case& c : cases) EXPECT_EQ(MurmurHash64A(c.key, kHashSeed), c.hash) << c.key;
  size_t index;
  uint8_t count;
  PatternLength("e0", &index, &count);  // Redis: PFADD e0 -> "Z:1318 v:1,1 Z:15065".
  EXPECT_EQ(index, 1318u);
  EXPECT_EQ(count, 1);
  PatternLength("hello world", &index, &count);
  EXPECT_EQ(index, 9399u);
  EXPECT_EQ(count, 4);
}

TEST(HyperLogLogTest, SelfTestPasses) {
  EXPECT_EQ(SelfTest(), "");
  EXPECT_EQ(SelfTest(0), "");
}

}  // namespace
}  // namespace gigakv::hll
