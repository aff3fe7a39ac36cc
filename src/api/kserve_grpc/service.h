// The Open Inference Protocol v2's gRPC service (inference.GRPCInferenceService,
// grpc_predict_v2.proto) for the shared gRPC server (api/grpc_server/server.h): ServerLive,
// ServerReady, ModelReady, ServerMetadata, ModelMetadata, ModelInfer and
// RepositoryModelLoad/Unload, on what the REST v2 dialect (api/kserve_v2) does.
#pragma once

#include "api/grpc_server/call.h"

namespace onepass::api::kserve_grpc {

grpc_server::ServiceTable service(const grpc_server::ServiceContext& context);

}  // namespace onepass::api::kserve_grpc
