// The contract's work: the /work document, its dates, and the Date header.
// See contract/CONTRACT.md.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

namespace nb {

// Parses exactly YYYY-MM-DDTHH:MM:SS.sssZ (24 characters) into milliseconds
// since the Unix epoch. Returns false for any other shape or for an instant
// that does not exist in the proleptic Gregorian calendar (month 13,
// 29 February of a common year, hour 24, second 60, ...).
bool parse_iso_millis(std::string_view s, std::int64_t& out);

// Writes milliseconds since the epoch as YYYY-MM-DDTHH:MM:SS.sssZ.
std::string format_iso_millis(std::int64_t ms);

// Writes seconds since the epoch as an IMF-fixdate
// ("Sun, 06 Nov 1994 08:49:37 GMT", RFC 9110 section 5.6.7).
std::string format_http_date(std::time_t secs);

// The current time as an IMF-fixdate, from a per-thread cache that is
// rebuilt whenever the wall-clock second changes.
const std::string& cached_http_date();

// Parses a /work request body, validates it and writes the JSON answer to
// out. Returns false when the body must be answered 400 (not JSON, not an
// object, a missing or null or mistyped field, no dates, an invalid date).
bool compute_work(std::string_view body, std::string& out);

}  // namespace nb
