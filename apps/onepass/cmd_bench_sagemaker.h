// `onepass bench --sagemaker-endpoint`: the one place the bench meets AWS credentials. Resolves
// the region and the credential chain once per command (src/aws) and gives each SageMaker
// endpoint a bench::SageMakerRuntime whose signer signs every attempt with fresh credentials.
#pragma once

#include <memory>
#include <string>

#include "aws/credential_chain.h"
#include "bench/sagemaker_runtime.h"

namespace onepass::app {

struct SageMakerAccess {
  std::string region;
  std::shared_ptr<aws::CredentialProvider> credentials;
};

// Throws Error(kInvalidArgument) naming what is missing (no region, no credentials).
SageMakerAccess resolve_sagemaker_access(const std::string& region_flag,
                                         const std::string& profile_flag);

std::shared_ptr<const bench::SageMakerRuntime> make_sagemaker_runtime(
    const SageMakerAccess& access, const std::string& endpoint_name);

}  // namespace onepass::app
