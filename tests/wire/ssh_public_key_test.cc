// OpenSSH public key lines as tenants register them: every type allot names is accepted as
// ssh-keygen writes it; what is refused names the field and what was expected. The good keys were
// made with ssh-keygen 9.2 (the sk- ones by hand from the same public points: ssh-keygen needs a
// token to make them, and `ssh-keygen -l` reads all of them).
#include "wire/ssh_public_key.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace allot {
namespace {

using ::testing::HasSubstr;

const std::string kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIhe7+biFCTni82ebkLROFS6++09sP6JjA7oUy9kBv/m user@ked25519";
const std::string kRsa3072 =
    "ssh-rsa "
    "AAAAB3NzaC1yc2EAAAADAQABAAABgQC46BhToDtTK+FYDjZV5pFjyJSdamIr1uimdvsaU1zOgQYS3y1aG+qHTWDzkFzPZHkFk2mfbVaKfbQhh6g0"
    "eVPXCDu5xT95B5phv213ob8GyHDwfMfbPvjniRJuoNlvBB9PrPi9yUECvPE/AxswktxzX8CrvjFnay3gE7y+q8/IK1aMvm3ghajiXbmfqRiJF4MQ"
    "y3C7Xp4jdnTgZTaI0a6ti64D//6GrP2qB9FND6fc2Swg0hm+7omnHACvq9DAbNn2gqqTJBuPfsb0nIiMuBzw7c1JL7u3lkVLFtu0JqIJ+GPEMH1W"
    "40pXoFGqS3pZI+c0mVcxHpGRrzrBQH3Gm7QTgzxv01HWShkje9+nOLkGsyzHrBOG9AFAlOxBIDMawet4SzyLdOX4rCINYQ0cBZyss+ESqBrh1JyK"
    "dLaM6RHK8B+juk54l5JgwRE594mIqZEHAgQi2JMlg6b+Xs+a228bBQMNlmoYWw8oDwLaijIG5oqdlYOYyh+DompeEEBLBkE= user@krsab3072";
const std::string kRsa1024 =
    "ssh-rsa "
    "AAAAB3NzaC1yc2EAAAADAQABAAAAgQCy9bzV4bvqmqiz+4rBNVuYL9/jBsQ3jXKD8jgVdpCOyQt7Uq2gg9AIPkI4KukyW3K7y2bqjdGFNLLpTWEf"
    "eQI730bBj6FxHBTuLIlx7w8G1JknabxQA6tOKtlXjUGaKpSOKfoQh0Abq5WFX3wwnFpG3ak9x6Yc41qyI8HxhBM3vw== user@krsab1024";
const std::string kEcdsa256Body =
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBF+m9UwGCO2xFoIYB56NE/HvocbLU0PB1OLSIx38E/6u0ntjvucfR5uyzuPt"
    "vgu/M0OjjX1E/m+CYDSgC3Of3oQ=";
const std::string kEcdsa256 = "ecdsa-sha2-nistp256 " + kEcdsa256Body + " user@kecdsab256";
const std::string kEcdsa384 =
    "ecdsa-sha2-nistp384 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHAzODQAAAAIbmlzdHAzODQAAABhBKQG5O5HKCos9MVt6eJSlXd2RiwCcMSWpxJAk/Njn/vJ9ds+dH0RrjlXOSrK"
    "bQInw8MYh56ethwbAbWaihHQFRdZ6xDDBMRR9Z955WXxfii49aqj3oq0+BD1R/2+YFP+dw== user@kecdsab384";
const std::string kEcdsa521 =
    "ecdsa-sha2-nistp521 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjEAAACFBADUjw7p02rNl9Fi6+ex+0OjQsNISE9r1wEf2VvS8v2YBamVPSlZPP8fHUiC"
    "fFidcrKLSeJn1rNPhvg0CkfJZgmedQBJoS6jOV2xiDvwotOnMQDhGfMYQbMxvtOvyVIhAH4nHW3lEvEg/AxNo/4trgK2n9ducDSGWIFdYDbMB/R7"
    "Ox4rrQ== user@kecdsab521";
const std::string kSkEd25519 =
    "sk-ssh-ed25519@openssh.com "
    "AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIIhe7+biFCTni82ebkLROFS6++09sP6JjA7oUy9kBv/mAAAABHNzaDo= yubikey";
const std::string kSkEcdsa =
    "sk-ecdsa-sha2-nistp256@openssh.com "
    "AAAAInNrLWVjZHNhLXNoYTItbmlzdHAyNTZAb3BlbnNzaC5jb20AAAAIbmlzdHAyNTYAAABBBF+m9UwGCO2xFoIYB56NE/HvocbLU0PB1OLSIx38"
    "E/6u0ntjvucfR5uyzuPtvgu/M0OjjX1E/m+CYDSgC3Of3oQAAAAEc3NoOg== yubikey";
const std::string kEd25519Body = "AAAAC3NzaC1lZDI1NTE5AAAAIIhe7+biFCTni82ebkLROFS6++09sP6JjA7oUy9kBv/m";

std::string Refusal(const std::string& line) {
  auto key = ParseSshPublicKey(line);
  EXPECT_FALSE(key) << line;
  if (key) return "";
  EXPECT_EQ(key.error().code(), Code::kInvalidArgument);
  return key.error().message();
}

TEST(SshPublicKeyTest, AcceptsEveryTypeItNamesAsSshKeygenWritesIt) {
  for (const std::string& line :
       {kEd25519, kRsa3072, kEcdsa256, kEcdsa384, kEcdsa521, kSkEd25519, kSkEcdsa}) {
    auto key = ParseSshPublicKey(line);
    ASSERT_TRUE(key) << line << ": " << key.error().ToString();
    EXPECT_EQ(key->Line(), line);
    EXPECT_TRUE(CheckSshPublicKey(line).ok());
  }
  auto ed = ParseSshPublicKey(kEd25519);
  EXPECT_EQ(ed->type, "ssh-ed25519");
  EXPECT_EQ(ed->body, kEd25519Body);
  EXPECT_EQ(ed->comment, "user@ked25519");
}

TEST(SshPublicKeyTest, TakesAKeyWithoutCommentAndKeepsSpacesInsideOne) {
  auto bare = ParseSshPublicKey("ssh-ed25519 " + kEd25519Body);
  ASSERT_TRUE(bare) << bare.error().ToString();
  EXPECT_EQ(bare->comment, "");
  EXPECT_EQ(bare->Line(), "ssh-ed25519 " + kEd25519Body);
  auto spaced = ParseSshPublicKey("  ssh-ed25519   " + kEd25519Body + "  Ada's  laptop  ");
  ASSERT_TRUE(spaced) << spaced.error().ToString();
  EXPECT_EQ(spaced->comment, "Ada's  laptop");
  EXPECT_EQ(spaced->Line(), "ssh-ed25519 " + kEd25519Body + " Ada's  laptop");
}

TEST(SshPublicKeyTest, RefusesATypeItDoesNotNameListingThoseItTakes) {
  EXPECT_THAT(Refusal("ssh-dss AAAAB3NzaC1kc3MAAACBAJH0 user@kdsa"),
              HasSubstr("type 'ssh-dss': expected one of ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256"));
  EXPECT_THAT(Refusal("ssh-ed25519-cert-v01@openssh.com AAAA"), HasSubstr("type 'ssh-ed25519-cert-v01@openssh.com'"));
  EXPECT_THAT(Refusal(""), HasSubstr("line: empty: expected 'TYPE BASE64 [COMMENT]'"));
  EXPECT_THAT(Refusal("ssh-ed25519"), HasSubstr("key: missing: expected base64 after the type"));
}

TEST(SshPublicKeyTest, RefusesABodyThatIsNotCanonicalBase64) {
  EXPECT_THAT(Refusal("ssh-ed25519 AAAA!AAA"), HasSubstr("key: character 5 '!' is not base64"));
  EXPECT_THAT(Refusal("ssh-ed25519 AAAAC3N"),
              HasSubstr("key: 7 characters of base64: expected a non-empty multiple of 4"));
  std::string loose = kEcdsa256Body;
  loose[loose.size() - 2] = 'R';  // 'Q' → 'R' sets a bit past the last byte
  EXPECT_THAT(Refusal("ecdsa-sha2-nistp256 " + loose), HasSubstr("key: not canonical base64"));
}

TEST(SshPublicKeyTest, RefusesABodyWhoseEmbeddedTypeIsNotTheLines) {
  EXPECT_THAT(Refusal("ssh-rsa " + kEd25519Body + " me"),
              HasSubstr("key: holds a 'ssh-ed25519' key but the line's type is 'ssh-rsa': expected the same type"));
  EXPECT_THAT(Refusal("ecdsa-sha2-nistp384 " + kEcdsa256Body), HasSubstr("holds a 'ecdsa-sha2-nistp256' key"));
}

TEST(SshPublicKeyTest, RefusesABodyThatIsNotItsTypesPublicKey) {
  EXPECT_THAT(Refusal("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAHwABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4="),
              HasSubstr("key: not a ssh-ed25519 public key: expected a 32-byte key, got 31 bytes"));
  EXPECT_THAT(Refusal("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fAA=="),
              HasSubstr("1 bytes after the key: expected none"));
  EXPECT_THAT(Refusal("ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAzODQAAABBBAAAAAAAAAAAAAAAAAAAAAAA"
                      "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
              HasSubstr("curve 'nistp384': expected 'nistp256'"));
  EXPECT_THAT(Refusal(kRsa1024), HasSubstr("a 1024-bit modulus: expected 2048 to 16384 bits"));
}

TEST(SshPublicKeyTest, RefusesOptionsBeforeTheType) {
  EXPECT_THAT(Refusal("command=\"/bin/true\" " + kEd25519),
              HasSubstr("options 'command=\"/bin/true\"': not accepted; expected the line to start with the key type"));
  EXPECT_THAT(Refusal("restrict " + kEd25519), HasSubstr("options 'restrict'"));
  EXPECT_THAT(Refusal("no-pty,from=\"10.0.0.1\" " + kEd25519), HasSubstr("options 'no-pty,from=\"10.0.0.1\"'"));
}

TEST(SshPublicKeyTest, RefusesANewlineOrAnyControlCharacterAnywhere) {
  EXPECT_THAT(Refusal(kEd25519 + "\n" + kRsa3072),
              HasSubstr("line: a newline at byte " + std::to_string(kEd25519.size() + 1) +
                        ": expected one line of printable text"));
  EXPECT_THAT(Refusal(kEd25519 + "\n"), HasSubstr("line: a newline"));
  EXPECT_THAT(Refusal("ssh-ed25519\t" + kEd25519Body), HasSubstr("line: control character \\x09 at byte 12"));
  EXPECT_THAT(Refusal(kEd25519 + " \x1b[2J"), HasSubstr("control character \\x1b"));
  EXPECT_THAT(Refusal("ssh-ed25519 " + kEd25519Body + " caf\xc3\xa9"),
              HasSubstr("comment: byte 4 is not ASCII: expected printable ASCII"));
  EXPECT_THAT(Refusal(kEd25519 + " " + std::string(9000, 'x')), HasSubstr("bytes: expected at most 8192"));
}

}  // namespace
}  // namespace allot
