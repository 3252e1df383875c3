// Tests of PrintableText: printable ASCII and valid UTF-8 kept, other bytes escaped, long
// text cut with a note.
#include "core/printable.h"

#include <gtest/gtest.h>
#include <stdlib.h>

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

// The broker credential never reaches the terminal, whole or as the start of a cut quote.
TEST(PrintableText, RedactsTheBrokerCredential) {
  ASSERT_EQ(setenv(kBrokerTokenVariable, "tok-1234567890abcdef", 1), 0);
  EXPECT_EQ(PrintableText("x RLTRADE_BROKER_TOKEN=tok-1234567890abcdef y"),
            "x RLTRADE_BROKER_TOKEN=[redacted] y");
  EXPECT_EQ(PrintableText("a tok-1234567890abcdef b tok-1234567890abcdef"),
            "a [redacted] b [redacted]");
  // A quote cut inside the token: its first 8+ bytes are the token's start.
  EXPECT_EQ(PrintableText("'tok-12345... (9 more bytes not shown)'"),
            "'[redacted]... (9 more bytes not shown)'");
  EXPECT_EQ(PrintableText("tok-123 is not it"), "tok-123 is not it");  // 7 bytes
  const std::string cut = PrintableText("secret=tok-1234567890abcdef", 12);
  EXPECT_EQ(cut.find("tok-1234"), std::string::npos) << cut;
  ASSERT_EQ(unsetenv(kBrokerTokenVariable), 0);
  EXPECT_EQ(PrintableText("tok-1234567890abcdef"), "tok-1234567890abcdef");
}

TEST(DescribeHeaderLine, ListsColumnNamesAndDescribesAnythingElse) {
  EXPECT_EQ(DescribeHeaderLine("Date, Open,High,\"Adj Close\",volume (k)"),
            "columns: Date, Open, High, Adj Close, volume (k)");
  EXPECT_EQ(DescribeHeaderLine("returns"), "columns: returns");
  const std::string not_shown = "does not look like a CSV header and is not shown";
  for (const std::string& line :
       {std::string("root:*:20228:0:99999:7:::"), std::string("ghp_0123456789abcdefABCDEF"),
        std::string("HOME=/root\0PATH=/bin", 20), std::string("user,pass=hunter2"),
        std::string("-----BEGIN OPENSSH PRIVATE KEY-----"), "a," + std::string(41, 'b')}) {
    const std::string d = DescribeHeaderLine(line);
    EXPECT_NE(d.find(not_shown), std::string::npos) << d;
    EXPECT_EQ(d.find(line.substr(0, 6)), std::string::npos) << d;
  }
  EXPECT_EQ(DescribeHeaderLine("root:*:20228:0:99999:7:::"),
            "the first line, 25 bytes in 1 comma-separated field(s), " + not_shown);
}

}  // namespace
}  // namespace rlt
