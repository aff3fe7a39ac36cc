// HTTPS to the Hub: the loopback Hub and its LFS host behind TLS with a CA made here (openssl
// CLI). onepass trusts it through SSL_CERT_FILE, host names and addresses checked, and refuses
// it without, naming certificate verification.
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "hub/resolve.h"
#include "hub_server.h"
#include "tests/support/files.h"

namespace onepass::hub {
namespace {
using onepass::testing::HubServer;
namespace fs = std::filesystem;
using onepass::testing::read_text;

// A throw-away CA and a server certificate it signed for localhost and 127.0.0.1.
class TestCa {
 public:
  TestCa() : dir_(fs::temp_directory_path() / ("onepass_tls_" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
    std::ofstream(dir_ / "ext.cnf") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                                       "basicConstraints=CA:FALSE\n"
                                       "extendedKeyUsage=serverAuth\n";
    const std::string d = dir_.string();
    const std::string script =
        "cd '" + d +
        "' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
        "-keyout ca.key -out ca.pem -days 2 -subj '/CN=onepass test CA' "
        "&& openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
        "-keyout server.key -out server.csr -subj '/CN=localhost' "
        "&& openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out server.pem -days 2 -extfile ext.cnf";
    const std::string quiet = "(" + script + ") >/dev/null 2>&1";
    if (std::system(quiet.c_str()) != 0) throw std::runtime_error("openssl failed: " + script);
  }
  ~TestCa() { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

TEST(HubTls, TrustsTheCaInSslCertFileAndRefusesItWithout) {
  const TestCa ca;
  ::setenv("SSL_CERT_FILE", ca.path("ca.pem").c_str(), 1);  // HubServer::log() verifies too
  HubServer server(ca.path("server.pem"), ca.path("server.key"));
  const fs::path cache =
      fs::temp_directory_path() / ("onepass_tls_cache_" + std::to_string(::getpid()));
  fs::remove_all(cache);
  Environment env;
  env.cache_dir = cache;
  env.progress = false;

  // Without the CA: the system store does not know it.
  ::unsetenv("SSL_CERT_FILE");
  env.endpoint = server.endpoint();
  std::string message;
  try {
    resolve_model("acme/tiny-nli@v1", env);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("certificate verification failed"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(cache / "models--acme--tiny-nli" / "snapshots"));

  // With it: by name (SNI and the DNS name checked) and the LFS redirect to 127.0.0.1 (the
  // address checked), both over TLS.
  ::setenv("SSL_CERT_FILE", ca.path("ca.pem").c_str(), 1);
  env.endpoint = server.endpoint("localhost");
  const fs::path snapshot = resolve_model("acme/tiny-nli@v1", env);
  const fs::path fixture = fs::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models/bert-tiny-nli";
  EXPECT_EQ(read_text(snapshot / "config.json"), read_text(fixture / "config.json"));
  EXPECT_EQ(read_text(snapshot / "model.safetensors"), read_text(fixture / "model.safetensors"));
  EXPECT_EQ(server.requests("cdn", "/blobs/").size(), 1u);
  ::unsetenv("SSL_CERT_FILE");
  fs::remove_all(cache);
}

}  // namespace
}  // namespace onepass::hub
