#pragma once

namespace allot {

// The OpenAPI 3 document of allotd's API (JSON).
const char* OpenApiDocument();

}  // namespace allot
