#include "core/names.h"

#include <gtest/gtest.h>

#include <string>

namespace allot {
namespace {

TEST(NamesTest, AcceptsTheNamesScenariosTracesAndTestsUse) {
  for (const char* ok : {"a", "train-7", "openb-pod-0000", "job_1.v2", "0", "gen-12", "vcEwI", "instance_0",
                         "node1.example.com", "A"}) {
    EXPECT_TRUE(CheckName("name", ok).ok()) << ok;
  }
  EXPECT_TRUE(CheckName("name", std::string(63, 'x')).ok());
}

TEST(NamesTest, RefusesSlashesDotsControlCharactersAndLongNames) {
  for (std::string bad : {std::string("a/b"), std::string("."), std::string(".."), std::string("-x"), std::string(""),
                          std::string("a b"), std::string("\x1b[31mred"), std::string("a\0b", 3), std::string("caf\xc3\xa9"),
                          std::string("\xff"), std::string(64, 'x'), std::string(10000, 'y'), std::string("a:b")}) {
    Status s = CheckName("job.name", bad);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
  }
}

TEST(NamesTest, TheMessageNamesTheFieldTheEscapedValueAndWhatWasExpected) {
  Status s = CheckName("job.name", "\x1b[2Jgone");
  EXPECT_EQ(s.message(),
            "job.name: '\\x1b[2Jgone' does not start with a letter or digit; expected 1 to 63 of A-Z a-z 0-9 . _ -, "
            "starting with a letter or digit");
  EXPECT_EQ(s.message().find('\x1b'), std::string::npos);
  EXPECT_NE(CheckName("job.name", "a/b").message().find("has the character '/'"), std::string::npos);
}

TEST(NamesTest, ATenantPathIsNamesJoinedBySlashes) {
  EXPECT_TRUE(CheckTenantPath("tenant.path", "org").ok());
  EXPECT_TRUE(CheckTenantPath("tenant.path", "org-a/team-1/x").ok());
  for (const char* bad : {"org/a/..", "org/a/.", "org//a", "/org", "org/", "", "org/a b", "org/\x1b"}) {
    EXPECT_EQ(CheckTenantPath("tenant.path", bad).code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_NE(CheckTenantPath("tenant.path", "org/a/..").message().find("segment '..'"), std::string::npos);
}

TEST(NamesTest, APrincipalIsANameOrAnEmailAddress) {
  for (const char* ok : {"alice", "alice@example.com", "ci+bot@example.com", "gpu-01"}) {
    EXPECT_TRUE(CheckPrincipal("principal", ok).ok()) << ok;
  }
  for (const char* bad : {"", "a@", "@b", "al ice", "a@b@c", "\x1b]0;x\x07"}) {
    EXPECT_EQ(CheckPrincipal("principal", bad).code(), Code::kInvalidArgument) << bad;
  }
}

TEST(NamesTest, EscapeTextShowsControlCharactersAsHexAndKeepsPrintableUtf8) {
  EXPECT_EQ(EscapeText("plain text, 100%"), "plain text, 100%");
  EXPECT_EQ(EscapeText("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(EscapeText(std::string("a\0b\n\t\x7f", 6)), "a\\x00b\\x0a\\x09\\x7f");
  EXPECT_EQ(EscapeText("≥ 1 → café"), "≥ 1 → café");
  EXPECT_EQ(EscapeText("\xc2\x9b" "2J"), "\\xc2\\x9b2J");           // C1 CSI
  EXPECT_EQ(EscapeText("\xe2\x80\xae" "txt"), "\\xe2\\x80\\xaetxt");  // right-to-left override
  EXPECT_EQ(EscapeText("\xff\xc3"), "\\xff\\xc3");                    // not UTF-8
  EXPECT_EQ(EscapeText("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(EscapeText(std::string(300, 'z'), 4), "zzzz…(300 bytes)");
}

}  // namespace
}  // namespace allot
