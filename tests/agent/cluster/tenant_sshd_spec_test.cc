// A tenant sshd's spec and the sshd_config it gives, without starting anything: what is refused
// names the field, and the config lets in only the tenant's user by its keys.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/cluster/tenant_sshd.h"
#include "agent/cluster/tenant_user.h"

namespace allot {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIhe7+biFCTni82ebkLROFS6++09sP6JjA7oUy9kBv/m ada@laptop";

TenantSshdSpec Spec() {
  TenantSshdSpec s;
  s.dir = "/var/lib/allot-agent/sshd/b-17";
  s.uid = 200000;
  s.gid = 200000;
  s.user = "allot-200000";
  s.port = 40022;
  s.authorized_keys = {kKey};
  return s;
}

std::string Refusal(const TenantSshdSpec& s) {
  Status st = CheckTenantSshdSpec(s);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
  return st.message();
}

TEST(TenantSshdSpecTest, AcceptsATenantsUidAnUnprivilegedPortAndItsKeys) {
  EXPECT_TRUE(CheckTenantSshdSpec(Spec()).ok()) << CheckTenantSshdSpec(Spec()).ToString();
  TenantSshdSpec v6 = Spec();
  v6.listen = "::";
  EXPECT_TRUE(CheckTenantSshdSpec(v6).ok());
}

TEST(TenantSshdSpecTest, RefusesRootAPrivilegedPortAndAnAddressThatIsAName) {
  TenantSshdSpec s = Spec();
  s.uid = 0;
  EXPECT_THAT(Refusal(s), HasSubstr("uid 0 gid 200000: expected the tenant's (the sshd never runs as root)"));
  s = Spec();
  s.port = 22;
  EXPECT_THAT(Refusal(s), HasSubstr("port 22: expected 1024..65535"));
  s.port = 70000;
  EXPECT_THAT(Refusal(s), HasSubstr("port 70000: expected 1024..65535"));
  s = Spec();
  s.listen = "node-1.example";
  EXPECT_THAT(Refusal(s), HasSubstr("listen 'node-1.example': expected an IPv4 or IPv6 address"));
  s = Spec();
  s.user = "Research/NLP";
  EXPECT_THAT(Refusal(s), HasSubstr("user 'Research/NLP': expected 1 to 32 of a-z 0-9 _ -"));
  s = Spec();
  s.sshd_binary = "sshd";
  EXPECT_THAT(Refusal(s), HasSubstr("sshd_binary 'sshd': expected an absolute path"));
}

TEST(TenantSshdSpecTest, RefusesADirectorySshdConfigCannotHoldAsItIs) {
  for (std::string dir : {"relative/b-17", "/", "/var/lib/../etc", "/var/lib/a b", "/var/lib/%u",
                                 "/var/lib/x#y", "/var/lib/x/"}) {
    TenantSshdSpec s = Spec();
    s.dir = dir;
    EXPECT_THAT(Refusal(s), HasSubstr("dir '" + dir + "': expected an absolute path of A-Z a-z 0-9 / . _ -"));
  }
}

TEST(TenantSshdSpecTest, NamesTheKeyItRefusesByItsIndex) {
  TenantSshdSpec s = Spec();
  s.authorized_keys = {kKey, "ssh-dss AAAAB3NzaC1kc3MAAACBAJH0 old"};
  EXPECT_THAT(Refusal(s), HasSubstr("authorized_keys[1]: type 'ssh-dss': expected one of ssh-ed25519"));
  s.authorized_keys = {"restrict " + kKey};
  EXPECT_THAT(Refusal(s), HasSubstr("authorized_keys[0]: options 'restrict': not accepted"));
  s.authorized_keys = {};
  EXPECT_THAT(Refusal(s), HasSubstr("authorized_keys: empty: expected at least one registered key"));
}

TEST(TenantSshdSpecTest, ItsConfigLetsInOnlyTheTenantsUserByTheKeysInItsDirectory) {
  const std::string config = TenantSshdConfig(Spec());
  for (std::string line : {
           "Port 40022\n", "ListenAddress 127.0.0.1\n", "AllowUsers allot-200000\n",
           "HostKey /var/lib/allot-agent/sshd/b-17/ssh_host_ed25519_key\n",
           "AuthorizedKeysFile /var/lib/allot-agent/sshd/b-17/authorized_keys\n", "AuthorizedKeysCommand none\n",
           "PidFile none\n", "AuthenticationMethods publickey\n", "PasswordAuthentication no\n",
           "KbdInteractiveAuthentication no\n", "PermitRootLogin no\n", "UsePAM no\n", "X11Forwarding no\n",
           "AllowAgentForwarding no\n", "AllowTcpForwarding local\n", "PermitTunnel no\n",
           "PermitUserEnvironment no\n"}) {
    EXPECT_THAT(config, HasSubstr(line));
  }
  EXPECT_THAT(config, Not(HasSubstr("Include")));
}

TEST(TenantSshdSpecTest, ATenantsUserIsNamedByItsUid) {
  EXPECT_EQ(TenantUserName(200000), "allot-200000");
  EXPECT_TRUE(IsValidTenantUserName(TenantUserName(4294967294u)));
  EXPECT_FALSE(IsValidTenantUserName("research/nlp"));
  EXPECT_FALSE(IsValidTenantUserName("0day"));
  EXPECT_FALSE(IsValidTenantUserName(std::string(33, 'a')));
}

}  // namespace
}  // namespace allot
