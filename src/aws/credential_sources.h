// The credential sources that are HTTP services: STS AssumeRoleWithWebIdentity (EKS IRSA), the
// container credentials endpoint (ECS, EKS Pod Identity) and the EC2 instance metadata service
// (IMDSv2). Each returns temporary credentials with their expiration, or throws
// Error(kInvalidArgument) naming the source and what it answered (never a secret or token).
#pragma once

#include <chrono>
#include <string>

#include "aws/credentials.h"
#include "aws/shared_config.h"

namespace onepass::aws {

struct WebIdentity {
  std::string role_arn;
  std::string token_file;
  std::string session_name;  // empty: a generated one
};

// POST AssumeRoleWithWebIdentity to STS: AWS_ENDPOINT_URL_STS, else AWS_ENDPOINT_URL, else
// https://sts.{region}.amazonaws.com (https://sts.amazonaws.com without a region). The call is
// unsigned: the web identity token is the proof.
Credentials fetch_web_identity(const Getenv& getenv, const WebIdentity& identity,
                               const std::string& region);

// AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on http://169.254.170.2) or
// AWS_CONTAINER_CREDENTIALS_FULL_URI, with the Authorization token from
// AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read on every call: it rotates) or
// AWS_CONTAINER_AUTHORIZATION_TOKEN. A plain-http FULL_URI must be a loopback or the ECS/EKS
// link-local address, as the SDKs require.
Credentials fetch_container(const Getenv& getenv);

// IMDSv2 at AWS_EC2_METADATA_SERVICE_ENDPOINT or http://169.254.169.254: a session token
// (PUT /latest/api/token), the instance role's name, then its credentials. `timeout` bounds each
// call (the SDKs' 1 s: off EC2 nothing answers).
Credentials fetch_imds(const Getenv& getenv, std::chrono::milliseconds timeout);

}  // namespace onepass::aws
