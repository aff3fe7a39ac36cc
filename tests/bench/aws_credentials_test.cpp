// The AWS credential chain and region, each source against a loopback stand-in and an
// environment of the test's own (no process variable is read): environment keys, the shared
// files and --profile, web identity through STS, the container endpoint, IMDSv2, the order
// between them, refreshing before expiry, and messages that name no secret.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <map>

#include "aws/credential_chain.h"
#include "aws/shared_config.h"
#include "base/error.h"
#include "fake_server.h"
#include "tests/support/temp_dir.h"

namespace onepass::aws {
namespace {

using bench::testing::FakeRequest;
using bench::testing::FakeResponse;
using bench::testing::FakeServer;
using onepass::testing::TempDir;

// An environment of the test's own; HOME is a fresh folder with no ~/.aws.
struct TestEnv {
  TempDir home{"aws_env"};
  std::map<std::string, std::string> vars{{"HOME", home.path().string()},
                                          {"AWS_EC2_METADATA_DISABLED", "true"}};
  Getenv getenv() const {
    return [vars = vars](const std::string& name) {
      const auto it = vars.find(name);
      return it == vars.end() ? std::string() : it->second;
    };
  }
  void write(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories((home.path() / relative).parent_path());
    std::ofstream(home.path() / relative) << text;
  }
};

std::string expires_in(std::chrono::seconds from_now) {
  return format_iso8601(WallClock::now() + from_now);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(AwsCredentials, EnvironmentKeysAndToken) {
  TestEnv env;
  env.vars["AWS_ACCESS_KEY_ID"] = "AKIDENV";
  env.vars["AWS_SECRET_ACCESS_KEY"] = "env-secret";
  env.vars["AWS_SESSION_TOKEN"] = "env-token";
  const Credentials c = default_credential_chain(env.getenv(), {})->get();
  EXPECT_EQ(c.access_key_id, "AKIDENV");
  EXPECT_EQ(c.secret_access_key, "env-secret");
  EXPECT_EQ(c.session_token, "env-token");
  EXPECT_EQ(c.source, "environment");
}

TEST(AwsCredentials, SharedFilesProfilesAndAnExplicitProfileWinsOverTheEnvironment) {
  TestEnv env;
  env.write(".aws/credentials",
            "# comment\n[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = "
            "default-secret\n\n[dev]\naws_access_key_id=AKIDDEV\naws_secret_access_key = "
            "dev#secret ; inline comment\naws_session_token = dev-token\n");
  env.write(".aws/config",
            "[default]\nregion = us-west-2\n[profile dev]\nregion = eu-central-1\n"
            "s3 =\n  max_concurrent_requests = 20\n");
  const Credentials d = default_credential_chain(env.getenv(), {})->get();
  EXPECT_EQ(d.access_key_id, "AKIDDEFAULT");
  EXPECT_EQ(resolve_region(env.getenv(), "", ""), "us-west-2");

  env.vars["AWS_ACCESS_KEY_ID"] = "AKIDENV";
  env.vars["AWS_SECRET_ACCESS_KEY"] = "env-secret";
  EXPECT_EQ(default_credential_chain(env.getenv(), {})->get().access_key_id, "AKIDENV");
  ChainOptions dev;
  dev.profile = "dev";
  const Credentials c = default_credential_chain(env.getenv(), dev)->get();
  EXPECT_EQ(c.access_key_id, "AKIDDEV");
  EXPECT_EQ(c.secret_access_key, "dev#secret");
  EXPECT_EQ(c.session_token, "dev-token");
  EXPECT_NE(c.source.find("profile dev"), std::string::npos);
  EXPECT_EQ(resolve_region(env.getenv(), "", "dev"), "eu-central-1");
  env.vars["AWS_DEFAULT_REGION"] = "ap-south-1";
  EXPECT_EQ(resolve_region(env.getenv(), "", "dev"), "ap-south-1");
  env.vars["AWS_REGION"] = "sa-east-1";
  EXPECT_EQ(resolve_region(env.getenv(), "", "dev"), "sa-east-1");
  EXPECT_EQ(resolve_region(env.getenv(), "us-east-2", "dev"), "us-east-2");

  // Other file locations, and a profile that is nowhere.
  env.write("elsewhere/creds", "[ci]\naws_access_key_id = AKIDCI\naws_secret_access_key = ci\n");
  env.vars["AWS_SHARED_CREDENTIALS_FILE"] = (env.home.path() / "elsewhere/creds").string();
  env.vars["AWS_PROFILE"] = "ci";
  env.vars.erase("AWS_ACCESS_KEY_ID");
  EXPECT_EQ(default_credential_chain(env.getenv(), {})->get().access_key_id, "AKIDCI");
  ChainOptions missing;
  missing.profile = "nope";
  EXPECT_NE(error_of([&] { default_credential_chain(env.getenv(), missing); }).find("profile nope"),
            std::string::npos);
}

TEST(AwsCredentials, NothingFoundNamesEveryPlaceItLooked) {
  TestEnv env;
  const std::string message = error_of([&] { default_credential_chain(env.getenv(), {}); });
  for (const char* place : {"AWS_ACCESS_KEY_ID", "profile default", "AWS_WEB_IDENTITY_TOKEN_FILE",
                            "AWS_CONTAINER_CREDENTIALS", "IMDS"}) {
    EXPECT_NE(message.find(place), std::string::npos) << place << " in " << message;
  }
  EXPECT_NE(error_of([&] { resolve_region(env.getenv(), "", ""); }).find("--region"),
            std::string::npos);
}

TEST(AwsCredentials, WebIdentityThroughSts) {
  std::atomic<int> calls{0};
  FakeServer sts([&](const FakeRequest& r) {
    ++calls;
    const bool ok = r.method == "POST" && r.target == "/" &&
                    r.body.find("Action=AssumeRoleWithWebIdentity") != std::string::npos &&
                    r.body.find("RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fbench") !=
                        std::string::npos &&
                    r.body.find("WebIdentityToken=eks.jwt.token") != std::string::npos;
    if (!ok) {
      return FakeResponse{400,
                          "<ErrorResponse><Error><Code>InvalidIdentityToken</Code><Message>bad "
                          "token</Message></Error></ErrorResponse>"};
    }
    return FakeResponse{
        200,
        "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
        "<AccessKeyId>ASIASTS</AccessKeyId><SecretAccessKey>sts/secret+x</SecretAccessKey>"
        "<SessionToken>sts&amp;token</SessionToken><Expiration>" +
            expires_in(std::chrono::hours(1)) +
            "</Expiration></Credentials></AssumeRoleWithWebIdentityResult>"
            "</AssumeRoleWithWebIdentityResponse>"};
  });
  TestEnv env;
  env.write("token", "eks.jwt.token\n");
  env.vars["AWS_WEB_IDENTITY_TOKEN_FILE"] = (env.home.path() / "token").string();
  env.vars["AWS_ROLE_ARN"] = "arn:aws:iam::123456789012:role/bench";
  env.vars["AWS_ENDPOINT_URL_STS"] = sts.url();
  const Credentials c = default_credential_chain(env.getenv(), {})->get();
  EXPECT_EQ(c.access_key_id, "ASIASTS");
  EXPECT_EQ(c.secret_access_key, "sts/secret+x");
  EXPECT_EQ(c.session_token, "sts&token");
  ASSERT_TRUE(c.expiration.has_value());
  EXPECT_EQ(calls.load(), 1);

  // The same role from a profile of the config file (web_identity_token_file + role_arn).
  env.vars.erase("AWS_WEB_IDENTITY_TOKEN_FILE");
  env.vars.erase("AWS_ROLE_ARN");
  env.write(".aws/config",
            "[profile eks]\nrole_arn = arn:aws:iam::123456789012:role/bench\n"
            "web_identity_token_file = " +
                (env.home.path() / "token").string() + "\n");
  ChainOptions eks;
  eks.profile = "eks";
  EXPECT_EQ(default_credential_chain(env.getenv(), eks)->get().access_key_id, "ASIASTS");
  EXPECT_EQ(calls.load(), 2);

  env.write("token", "another.token\n");
  env.vars["AWS_WEB_IDENTITY_TOKEN_FILE"] = (env.home.path() / "token").string();
  env.vars["AWS_ROLE_ARN"] = "arn:aws:iam::123456789012:role/bench";
  const std::string message = error_of([&] { default_credential_chain(env.getenv(), {}); });
  EXPECT_NE(message.find("InvalidIdentityToken"), std::string::npos) << message;
  EXPECT_EQ(message.find("another.token"), std::string::npos) << message;
}

TEST(AwsCredentials, ContainerEndpointWithItsAuthorizationToken) {
  FakeServer ecs([&](const FakeRequest& r) {
    const auto auth = r.headers.find("authorization");
    if (r.target != "/v1/credentials?x=1" || auth == r.headers.end() ||
        auth->second != "pod-token") {
      return FakeResponse{401, "{}"};
    }
    return FakeResponse{200, R"({"AccessKeyId":"ASIAECS","SecretAccessKey":"ecs-secret",)"
                             R"("Token":"ecs-token","Expiration":")" +
                                 expires_in(std::chrono::hours(6)) + "\"}"};
  });
  TestEnv env;
  env.vars["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = ecs.url() + "/v1/credentials?x=1";
  env.vars["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "pod-token";
  Credentials c = default_credential_chain(env.getenv(), {})->get();
  EXPECT_EQ(c.access_key_id, "ASIAECS");
  EXPECT_EQ(c.session_token, "ecs-token");
  // The token file wins over the variable (EKS Pod Identity rotates it).
  env.write("pod", "pod-token\n");
  env.vars["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "stale";
  env.vars["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = (env.home.path() / "pod").string();
  EXPECT_EQ(default_credential_chain(env.getenv(), {})->get().access_key_id, "ASIAECS");
  env.vars["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = "http://example.com/creds";
  EXPECT_NE(error_of([&] { default_credential_chain(env.getenv(), {}); }).find("plain http"),
            std::string::npos);
}

TEST(AwsCredentials, ImdsV2SessionTokenThenRoleThenCredentials) {
  std::atomic<int> token_requests{0};
  FakeServer imds([&](const FakeRequest& r) {
    if (r.method == "PUT" && r.target == "/latest/api/token") {
      ++token_requests;
      const auto ttl = r.headers.find("x-aws-ec2-metadata-token-ttl-seconds");
      return ttl == r.headers.end() ? FakeResponse{400, ""} : FakeResponse{200, "imds-session"};
    }
    const auto token = r.headers.find("x-aws-ec2-metadata-token");
    if (token == r.headers.end() || token->second != "imds-session") return FakeResponse{401, ""};
    if (r.target == "/latest/meta-data/iam/security-credentials/") {
      return FakeResponse{200, "bench-role\n"};
    }
    if (r.target == "/latest/meta-data/iam/security-credentials/bench-role") {
      return FakeResponse{200, R"({"Code":"Success","AccessKeyId":"ASIAIMDS",)"
                               R"("SecretAccessKey":"imds-secret","Token":"imds-token",)"
                               R"("Expiration":")" +
                                   expires_in(std::chrono::hours(6)) + "\"}"};
    }
    return FakeResponse{404, ""};
  });
  TestEnv env;
  env.vars.erase("AWS_EC2_METADATA_DISABLED");
  env.vars["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = imds.url() + "/";
  const Credentials c = default_credential_chain(env.getenv(), {})->get();
  EXPECT_EQ(c.access_key_id, "ASIAIMDS");
  EXPECT_EQ(c.session_token, "imds-token");
  EXPECT_NE(c.source.find("bench-role"), std::string::npos);
  EXPECT_EQ(token_requests.load(), 1);
  env.vars["AWS_EC2_METADATA_DISABLED"] = "true";
  EXPECT_THROW(default_credential_chain(env.getenv(), {}), Error);
  EXPECT_EQ(token_requests.load(), 1);  // disabled: not asked
}

TEST(AwsCredentials, TemporaryCredentialsAreFetchedAgainBeforeTheyExpire) {
  WallClock::time_point now = WallClock::now();
  int fetched = 0;
  CredentialProvider provider(
      [&] {
        ++fetched;
        Credentials c{"ASIA" + std::to_string(fetched), "s", "t", now + std::chrono::minutes(15),
                      "test"};
        return c;
      },
      [&] { return now; });
  EXPECT_EQ(provider.get().access_key_id, "ASIA1");
  now += std::chrono::minutes(9);  // 6 minutes left: still fresh
  EXPECT_EQ(provider.get().access_key_id, "ASIA1");
  now += std::chrono::minutes(2);  // 4 minutes left: inside the refresh window
  EXPECT_EQ(provider.get().access_key_id, "ASIA2");
  EXPECT_EQ(provider.fetches(), 2u);
  CredentialProvider long_term([] { return Credentials{"AKID", "s", "", std::nullopt, "x"}; });
  long_term.get();
  long_term.get();
  EXPECT_EQ(long_term.fetches(), 1u);
}

TEST(AwsSharedConfig, IniSectionsAndComments) {
  const IniSections s = parse_ini(
      "; top\n[a]\nk = v\n  nested = skipped\n[ profile b ]\nx=1 # note\ny = p#q\n[broken\nz=2\n");
  EXPECT_EQ(s.at("a").at("k"), "v");
  EXPECT_EQ(s.at("a").count("nested"), 0u);
  EXPECT_EQ(s.at("profile b").at("x"), "1");
  EXPECT_EQ(s.at("profile b").at("y"), "p#q");
  EXPECT_EQ(s.size(), 2u);
}

}  // namespace
}  // namespace onepass::aws
