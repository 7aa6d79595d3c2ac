// HTTPS: with a certificate and key, the API speaks TLS only; a client that trusts the
// certificate gets through, a plain-HTTP client does not, and a bad key refuses to start.
#include <fstream>

#include "testing/api_fixture.h"

namespace allot {
namespace {

class TlsTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    cert_ = (dir_ / "cert.pem").string();  // the fixture's scratch directory
    key_ = (dir_ / "key.pem").string();
    std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + key_ + " -out " + cert_ +
                      " -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl";
    ApiFixture::SetUp();
  }
  ApiOptions Options() override {
    ApiOptions o = ApiFixture::Options();
    o.tls_cert = cert_;
    o.tls_key = key_;
    return o;
  }
  std::string cert_, key_;
};

TEST_F(TlsTest, ServesHttpsToClientsThatTrustTheCertificateAndNothingElse) {
  httplib::SSLClient tls("127.0.0.1", api_->port());
  tls.set_ca_cert_path(cert_.c_str());
  tls.enable_server_certificate_verification(true);
  tls.set_bearer_token_auth(admin_.c_str());
  auto r = tls.Get("/v1/nodes");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  httplib::SSLClient untrusting("127.0.0.1", api_->port());
  untrusting.enable_server_certificate_verification(true);
  EXPECT_FALSE(untrusting.Get("/healthz")) << "a certificate nobody vouches for is refused";
  httplib::Client plain("127.0.0.1", api_->port());
  auto p = plain.Get("/healthz");
  EXPECT_TRUE(!p || p->status != 200) << "no plain HTTP on a TLS port";
}

TEST(TlsConfigTest, AMissingCertificateRefusesToStartNamingIt) {
  ControllerOptions o;
  auto j = SqliteJournal::Open(":memory:");
  ASSERT_TRUE(j.has_value());
  Controller ctl(std::move(*j), [] { return int64_t{0}; }, o);
  ApiOptions a{"127.0.0.1", 0};
  a.tls_cert = "/nonexistent/cert.pem";
  a.tls_key = "/nonexistent/key.pem";
  ApiServer api(ctl, a);
  Status s = api.Start();
  EXPECT_EQ(s.message(), "tls: cannot load the certificate '/nonexistent/cert.pem' and key '/nonexistent/key.pem' (PEM files expected)");
}

}  // namespace
}  // namespace allot
