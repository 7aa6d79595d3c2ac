// allot's version, from CMakeLists.txt's project(VERSION): what `--version` prints and what an
// agent registers with. Defined in the build directory's generated/version.cc.
#pragma once

namespace allot {

extern const char* const kAllotVersion;

}  // namespace allot
