// base/utf8.h: what reshard prints is valid UTF-8 however malformed its
// input, and quotes of long input are short and cut between characters.
#include "base/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace reshard {
namespace {

TEST(Utf8Test, ValidatesPerRfc3629) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("S(0)R"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9"));          // é
  EXPECT_TRUE(IsValidUtf8("\xE2\x82\xAC"));      // €
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x98\x80"));  // U+1F600
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));              // cut short
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\x80"));              // lone continuation
}

TEST(Utf8Test, ReplacesEachBadByteAndKeepsTheRest) {
  EXPECT_EQ(Utf8Valid("S(0)\xFFR"), "S(0)\xEF\xBF\xBDR");
  EXPECT_EQ(Utf8Valid("\xC3\xA9\xC3"), "\xC3\xA9\xEF\xBF\xBD");
  EXPECT_EQ(Utf8Valid("ok"), "ok");
  EXPECT_TRUE(IsValidUtf8(Utf8Valid("\xF0\x9F\x98")));
}

TEST(Utf8Test, AbbreviateCutsBetweenCharacters) {
  EXPECT_EQ(Abbreviate("short", 10), "short");
  EXPECT_EQ(Abbreviate("0123456789", 10), "0123456789");
  EXPECT_EQ(Abbreviate("0123456789A", 10), "0123456...");
  std::string accents;
  for (int i = 0; i < 20; ++i) accents += "\xC3\xA9";  // 40 bytes
  // 38 bytes leave 35 for text: 17 whole two-byte characters, not 17.5.
  const std::string shown = Abbreviate(accents, 38);
  EXPECT_TRUE(IsValidUtf8(shown)) << shown;
  EXPECT_EQ(shown, accents.substr(0, 34) + "...");
  EXPECT_LE(Abbreviate(std::string(10 << 20, 'x'), 64).size(), 64u);
  EXPECT_TRUE(IsValidUtf8(Abbreviate(std::string(100, '\xFF'), 64)));
}

}  // namespace
}  // namespace reshard
