#include "apps/onepass/cmd_bench_sagemaker.h"

#include <cstdio>

#include "aws/sigv4.h"
#include "base/error.h"

namespace onepass::app {

SageMakerAccess resolve_sagemaker_access(const std::string& region_flag,
                                         const std::string& profile_flag) {
  const aws::Getenv getenv = aws::process_environment();
  SageMakerAccess access;
  access.region = aws::resolve_region(getenv, region_flag, profile_flag);
  aws::ChainOptions options;
  options.profile = profile_flag;
  options.region = access.region;
  access.credentials = aws::default_credential_chain(getenv, options);
  // Safe to print: the key id's last characters and the source, never the secret or token.
  std::fprintf(stderr, "SageMaker: region %s, credentials %s\n", access.region.c_str(),
               access.credentials->get().describe().c_str());
  return access;
}

std::shared_ptr<const bench::SageMakerRuntime> make_sagemaker_runtime(
    const SageMakerAccess& access, const std::string& endpoint_name) {
  auto runtime = std::make_shared<bench::SageMakerRuntime>();
  runtime->endpoint_name = endpoint_name;
  runtime->region = access.region;
  const aws::SigningScope scope{access.region, "sagemaker"};
  runtime->sign = [credentials = access.credentials, scope](http::Request& request,
                                                            const http::Url& url) {
    aws::sign_request(request, url, credentials->get(), scope, aws::WallClock::now());
  };
  return runtime;
}

}  // namespace onepass::app
