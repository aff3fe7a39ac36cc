// TEI's gRPC API (package tei.v1, tei.proto) for the shared gRPC server
// (api/grpc_server/server.h): the Info, Embed, Predict, Rerank and Tokenize services, unary and
// streaming, on what the REST TEI dialect (api/tei/tasks.h) does, so that both answer alike.
//
// TEI's messages name no model: the `x-amzn-sagemaker-target-model` metadata chooses one, as the
// header does over HTTP, and with one model served none is needed. A bidi stream's messages are
// each submitted as they arrive (batched like concurrent requests) and answered in their order;
// a bad message ends the stream with its status after the answers before it.
#pragma once

#include <vector>

#include "api/grpc_server/call.h"

namespace onepass::api::tei_grpc {

std::vector<grpc_server::ServiceTable> services(const grpc_server::ServiceContext& context);

}  // namespace onepass::api::tei_grpc
