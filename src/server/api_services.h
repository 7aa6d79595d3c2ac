// Inference services in the REST API (server/api_services.cc; docs/services.md).
#pragma once

#include <httplib.h>
#include <yaml-cpp/yaml.h>

#include "server/api_json.h"
#include "server/api_routes.h"

namespace allot {

// A service and each of its replicas (node, port, state, revision, restarts), times RFC 3339.
Json ServiceJson(const Controller::View& v, const Service& s);
// Creates the service `tree` describes (POST /v1/services, or a `kind: service` body to POST
// /v1/jobs), answering 201 with it.
void CreateService(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who,
                   const YAML::Node& tree);

}  // namespace allot
