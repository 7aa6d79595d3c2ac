// The dashboard's static files (web/), compiled into allotd by cmake/embed_web.cmake: no build
// server or install step at run time, and the files served are the ones the binary was tested with.
#pragma once

#include <span>
#include <string_view>

namespace allot {

struct WebAsset {
  std::string_view path;          // "/index.html", "/vendor/uplot/uPlot.esm.js": under web/
  std::string_view content_type;  // by extension
  std::string_view body;
  std::string_view etag;          // quoted: "\"0123456789abcdef\"", from the file's SHA-256
};

// Every file under web/, sorted by path (generated).
std::span<const WebAsset> WebAssets();

// The file at `path` ("/app.js"), or null.
const WebAsset* FindWebAsset(std::string_view path);

}  // namespace allot
