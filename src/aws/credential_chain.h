// Where credentials and the region come from, in the order the AWS SDKs look: the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), the shared files' profile
// (--profile, else AWS_PROFILE, else "default"; an explicit --profile skips the environment's
// keys, as in the SDKs), web identity (AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN), the
// container credentials endpoint, then IMDSv2 unless AWS_EC2_METADATA_DISABLED=true.
// CredentialProvider caches what the chosen source gave and fetches again before temporary
// credentials expire, so a long benchmark keeps signing with valid keys.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "aws/credentials.h"
#include "aws/shared_config.h"

namespace onepass::aws {

class CredentialProvider {
 public:
  using Fetch = std::function<Credentials()>;
  using Now = std::function<WallClock::time_point()>;
  // Temporary credentials are fetched again this long before they expire (the SDKs' window).
  static constexpr std::chrono::minutes kRefreshWindow{5};

  explicit CredentialProvider(Fetch fetch, Now now = &WallClock::now);

  // Thread-safe: the first caller (and the first after the refresh window opens) fetches while
  // the others wait. Throws what the source throws.
  Credentials get();
  std::size_t fetches() const;

 private:
  Fetch fetch_;
  Now now_;
  mutable std::mutex mutex_;
  std::optional<Credentials> cached_;
  std::size_t fetches_ = 0;
};

struct ChainOptions {
  std::string profile;  // --profile; empty: AWS_PROFILE or "default"
  std::string region;   // the resolved region (web identity's STS endpoint)
  std::chrono::milliseconds imds_timeout{1000};
};

// Picks the first source that is configured and returns a provider bound to it (resolving it
// once, so that a missing source fails before the benchmark starts). Throws
// Error(kInvalidArgument) naming every place it looked when none has credentials, or naming the
// source and its answer when a configured source fails.
std::shared_ptr<CredentialProvider> default_credential_chain(const Getenv& getenv,
                                                             const ChainOptions& options);

// --region, AWS_REGION, AWS_DEFAULT_REGION, then the profile's `region`; throws
// Error(kInvalidArgument) when none is set.
std::string resolve_region(const Getenv& getenv, const std::string& flag,
                           const std::string& profile_flag);

}  // namespace onepass::aws
