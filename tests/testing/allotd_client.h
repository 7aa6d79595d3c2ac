// Calling a real allotd (testing/allotd_process.h) from a test as a client would.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace allot::testing {

// METHOD (GET or POST) `path` on the allotd at `port` as `token`: the status and the JSON body
// (null when there was no answer; discarded when not JSON).
inline std::pair<int, nlohmann::json> CallAllotd(int port, const std::string& method, const std::string& path,
                                                 const std::string& token, const nlohmann::json& body = nullptr) {
  httplib::Client c("127.0.0.1", port);
  c.set_bearer_token_auth(token.c_str());
  c.set_connection_timeout(2);
  auto r = method == "GET" ? c.Get(path) : c.Post(path, body.dump(), "application/json");
  if (!r) return {0, nullptr};
  return {r->status, nlohmann::json::parse(r->body, nullptr, false)};
}

}  // namespace allot::testing
