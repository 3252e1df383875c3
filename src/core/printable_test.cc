// Tests of PrintableText: printable ASCII and valid UTF-8 kept, other bytes escaped, long
// text cut with a note.
#include "core/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace rlt {
namespace {

TEST(PrintableText, KeepsAsciiAndValidUtf8) {
  EXPECT_EQ(PrintableText("close = 12.5\n\tok"), "close = 12.5\n\tok");
  EXPECT_EQ(PrintableText("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x93\x88"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x93\x88");  // e-acute, euro sign, a 4-byte emoji
}

TEST(PrintableText, EscapesControlAndInvalidBytes) {
  EXPECT_EQ(PrintableText(std::string("a\x01\x1b[31mb", 8)), "a\\x01\\x1B[31mb");
  EXPECT_EQ(PrintableText("CAF\xC9"), "CAF\\xC9");              // Latin-1 E-acute
  EXPECT_EQ(PrintableText("\xFF\xFE"), "\\xFF\\xFE");           // never valid
  EXPECT_EQ(PrintableText("\xC0\xAF"), "\\xC0\\xAF");           // overlong '/'
  EXPECT_EQ(PrintableText("\xED\xA0\x80"), "\\xED\\xA0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(PrintableText("\xE2\x82"), "\\xE2\\x82");           // truncated sequence
  EXPECT_EQ(PrintableText(std::string("x\0y", 3)), "x\\x00y");
}

TEST(PrintableText, CutsLongTextWithANote) {
  const std::string line(10 << 20, 'a');  // a 10 MB line
  const std::string out = PrintableText(line, 100);
  EXPECT_EQ(out.substr(0, 100), std::string(100, 'a'));
  EXPECT_EQ(out.substr(100),
            "... (" + std::to_string(line.size() - 100) + " more bytes not shown)");
  EXPECT_LT(PrintableText(line).size(), kMaxPrintedMessageBytes + 64);
}

}  // namespace
}  // namespace rlt
