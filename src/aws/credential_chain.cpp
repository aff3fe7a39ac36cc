#include "aws/credential_chain.h"

#include <algorithm>
#include <cctype>

#include "aws/credential_sources.h"
#include "base/error.h"

namespace onepass::aws {
namespace {

Error failure(const std::string& message) { return Error(ErrorKind::kInvalidArgument, message); }

bool is_true(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return value == "true" || value == "1";
}

// A profile's credentials: static keys, or a web identity role. Nullopt when the profile holds
// neither (the chain then goes on, as the SDKs do for the default profile).
std::optional<CredentialProvider::Fetch> profile_source(const Getenv& getenv,
                                                        const SharedConfig& config,
                                                        const std::string& profile,
                                                        const std::string& region) {
  const auto key = config.get(profile, "aws_access_key_id");
  const auto secret = config.get(profile, "aws_secret_access_key");
  if (key && secret && !key->empty() && !secret->empty()) {
    Credentials credentials;
    credentials.access_key_id = *key;
    credentials.secret_access_key = *secret;
    credentials.session_token = config.get(profile, "aws_session_token").value_or("");
    credentials.source = "profile " + profile + " (" + config.credentials_path.string() + ")";
    return [credentials] { return credentials; };
  }
  const auto role = config.get(profile, "role_arn");
  const auto token_file = config.get(profile, "web_identity_token_file");
  if (role && token_file) {
    WebIdentity identity{*role, *token_file, config.get(profile, "role_session_name").value_or("")};
    return [getenv, identity, region] { return fetch_web_identity(getenv, identity, region); };
  }
  if (role) {
    throw failure("profile " + profile + " assumes role " + *role +
                  " through source_profile or credential_source, which onepass does not do: "
                  "export the role's credentials (`aws configure export-credentials --profile " +
                  profile + " --format env`) and run again");
  }
  if (config.get(profile, "sso_session") || config.get(profile, "sso_start_url") ||
      config.get(profile, "credential_process")) {
    throw failure("profile " + profile +
                  " uses IAM Identity Center or credential_process, which onepass does not do: "
                  "export its credentials (`aws configure export-credentials --profile " +
                  profile + " --format env`) and run again");
  }
  return std::nullopt;
}

}  // namespace

CredentialProvider::CredentialProvider(Fetch fetch, Now now)
    : fetch_(std::move(fetch)), now_(std::move(now)) {}

Credentials CredentialProvider::get() {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool fresh =
      cached_ && (!cached_->expiration || now_() + kRefreshWindow < *cached_->expiration);
  if (!fresh) {
    Credentials next = fetch_();
    ++fetches_;
    cached_ = std::move(next);
  }
  return *cached_;
}

std::size_t CredentialProvider::fetches() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fetches_;
}

std::shared_ptr<CredentialProvider> default_credential_chain(const Getenv& getenv,
                                                             const ChainOptions& options) {
  const SharedConfig config = SharedConfig::load(getenv);
  const std::string profile = profile_name(getenv, options.profile);
  std::optional<CredentialProvider::Fetch> source;

  const std::string key = getenv("AWS_ACCESS_KEY_ID"), secret = getenv("AWS_SECRET_ACCESS_KEY");
  if (options.profile.empty() && !key.empty() && !secret.empty()) {
    Credentials credentials{key, secret, getenv("AWS_SESSION_TOKEN"), std::nullopt, "environment"};
    source = [credentials] { return credentials; };
  }
  if (!source) {
    if (!options.profile.empty() && !config.has_profile(profile)) {
      throw failure("profile " + profile + " is in neither " + config.credentials_path.string() +
                    " nor " + config.config_path.string());
    }
    source = profile_source(getenv, config, profile, options.region);
    if (!source && !options.profile.empty()) {
      throw failure("profile " + profile + " has no aws_access_key_id/aws_secret_access_key " +
                    "and no web_identity_token_file/role_arn");
    }
  }
  if (!source && !getenv("AWS_WEB_IDENTITY_TOKEN_FILE").empty() &&
      !getenv("AWS_ROLE_ARN").empty()) {
    WebIdentity identity{getenv("AWS_ROLE_ARN"), getenv("AWS_WEB_IDENTITY_TOKEN_FILE"),
                         getenv("AWS_ROLE_SESSION_NAME")};
    const std::string region = options.region;
    source = [getenv, identity, region] { return fetch_web_identity(getenv, identity, region); };
  }
  if (!source && (!getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").empty() ||
                  !getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI").empty())) {
    source = [getenv] { return fetch_container(getenv); };
  }
  const bool imds_disabled = is_true(getenv("AWS_EC2_METADATA_DISABLED"));
  if (!source && !imds_disabled) {
    const auto timeout = options.imds_timeout;
    source = [getenv, timeout] { return fetch_imds(getenv, timeout); };
  }
  if (!source) {
    throw failure(
        "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), "
        "none in profile " +
        profile + " of " + config.credentials_path.string() + " or " + config.config_path.string() +
        ", no web identity (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN), no container endpoint "
        "(AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI), and IMDS is off "
        "(AWS_EC2_METADATA_DISABLED)");
  }
  auto provider = std::make_shared<CredentialProvider>(std::move(*source));
  try {
    provider->get();
  } catch (const Error& e) {
    if (imds_disabled || !std::string(e.what()).starts_with("the EC2 instance metadata")) throw;
    throw failure(
        "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), "
        "none in profile " +
        profile + " of " + config.credentials_path.string() + " or " + config.config_path.string() +
        ", no web identity, no container endpoint, and " + e.what());
  }
  return provider;
}

std::string resolve_region(const Getenv& getenv, const std::string& flag,
                           const std::string& profile_flag) {
  if (!flag.empty()) return flag;
  for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    if (std::string region = getenv(name); !region.empty()) return region;
  }
  const std::string profile = profile_name(getenv, profile_flag);
  if (auto region = SharedConfig::load(getenv).get(profile, "region"); region && !region->empty())
    return *region;
  throw failure("no AWS region: pass --region, set AWS_REGION, or set region in profile " +
                profile);
}

}  // namespace onepass::aws
