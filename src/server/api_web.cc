// The web dashboard's static files (server/web_assets.h) at / and /ui/…, without a token: the
// pages hold no data, they read /v1 with the token the person gives the login page. Every
// answer carries a strict Content-Security-Policy (only allotd's own scripts, styles and API)
// and an ETag; the browser revalidates (no-cache), so a new allotd's files are seen at once and
// an unchanged file costs a 304.
#include <httplib.h>

#include <algorithm>
#include <string>

#include "server/api_routes.h"
#include "server/web_assets.h"

namespace allot {

const WebAsset* FindWebAsset(std::string_view path) {
  std::span<const WebAsset> all = WebAssets();
  auto it = std::lower_bound(all.begin(), all.end(), path, [](const WebAsset& a, std::string_view p) { return a.path < p; });
  return it != all.end() && it->path == path ? &*it : nullptr;
}

namespace {

// No inline script or style, nothing from elsewhere, no framing. (uPlot sizes its canvas
// through the CSSOM, which style-src does not govern.)
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void Serve(const WebAsset& a, const httplib::Request& req, httplib::Response& res) {
  res.set_header("ETag", std::string(a.etag));
  res.set_header("Cache-Control", "no-cache");
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  if (req.get_header_value("If-None-Match") == a.etag) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.set_content(std::string(a.body), std::string(a.content_type));
}

void ServePath(const std::string& path, const httplib::Request& req, httplib::Response& res) {
  const WebAsset* a = FindWebAsset(path);
  if (a == nullptr) return ReplyError(res, NotFound("/ui" + path + ": no such file of the dashboard"));
  Serve(*a, req, res);
}

}  // namespace

void WebRoutes(HttpRouter& http, RouteContext&) {
  http.Get("/", [](const httplib::Request& req, httplib::Response& res) { ServePath("/index.html", req, res); });
  http.Get("/ui/?", [](const httplib::Request& req, httplib::Response& res) { ServePath("/index.html", req, res); });
  http.Get(R"(/ui(/.+))", [](const httplib::Request& req, httplib::Response& res) { ServePath(req.matches[1], req, res); });
}

}  // namespace allot
