#include "common/sha256.h"

#include <string>

#include <gtest/gtest.h>

namespace tuned {
namespace {

// Known vectors from FIPS 180-2.
TEST(Sha256Hex, EmptyString) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Hex, Abc) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Hex, TwoBlockMessage) {
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Hex, MillionAs) {
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Hex, EmbeddedNulBytesCount) {
  EXPECT_NE(Sha256Hex(std::string("a\0b", 3)), Sha256Hex("ab"));
}

}  // namespace
}  // namespace tuned
