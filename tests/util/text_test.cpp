// util/text.h's token_bytes: a vocabulary's token names back to the bytes they stand for, as
// generate prints them and bits_per_byte counts them.
// ctest-label: unit
#include <gtest/gtest.h>

#include "util/text.h"

namespace plugtrain {
namespace {

TEST(TokenBytes, EachByteNameIsItsByteAndTheRestIsTheNamesOwnText) {
  EXPECT_EQ(token_bytes("<0x0A>"), "\n");                                        // a byte vocabulary's, SentencePiece's
  EXPECT_EQ(token_bytes(" the"), " the");                                        // a sub-word
  EXPECT_EQ(token_bytes(" \xe2\x94\x9c<0xE2><0x94>"), " \xe2\x94\x9c\xe2\x94");  // a BPE token cutting a character
  EXPECT_EQ(token_bytes("<0xZZ>"), "<0xZZ>");                                    // not hexadecimal: text
  EXPECT_EQ(token_bytes("<0x4"), "<0x4");                                        // cut short: text
  EXPECT_EQ(token_bytes(""), "");                                                // a control piece
  EXPECT_EQ(token_bytes("<0x00>").size(), 1u);
}

}  // namespace
}  // namespace plugtrain
