// date's Posix::time_zone (<date/ptz.h>, libhowardhinnant-date-dev 3.0.1) for C++20. One line of
// that header names hh_mm_ss under both `using namespace date` and `using namespace
// std::chrono`, which C++20 makes ambiguous (fixed upstream after 3.0.1); spelling it
// date::hh_mm_ss there, through a namespace alias date::date, is all this does.
// The header also defines a function that is not inline: include it in one file only
// (metering/time_zone.cc).
#pragma once

#include <date/date.h>

namespace date {
namespace date = ::date;
}  // namespace date

#define hh_mm_ss date::hh_mm_ss
#include <date/ptz.h>
#undef hh_mm_ss
