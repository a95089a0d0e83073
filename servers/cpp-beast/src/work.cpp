#include "work.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace nb {

namespace {

using json = nlohmann::json;

// H. Hinnant's days_from_civil / civil_from_days (proleptic Gregorian).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2);
}

bool is_leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(std::int64_t y, unsigned m) {
    static const unsigned days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

// The digits of s[pos, pos + n) as a number; false if any is not 0-9.
bool digits(std::string_view s, std::size_t pos, std::size_t n, unsigned& out) {
    unsigned v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        const char c = s[i];
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    out = v;
    return true;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

const char* const kDays[7] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};  // from 1970-01-01
const char* const kMonths[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

}  // namespace

bool parse_iso_millis(std::string_view s, std::int64_t& out) {
    if (s.size() != 24 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
        s[16] != ':' || s[19] != '.' || s[23] != 'Z')
        return false;
    unsigned y, mo, d, h, mi, sec, ms;
    if (!digits(s, 0, 4, y) || !digits(s, 5, 2, mo) || !digits(s, 8, 2, d) ||
        !digits(s, 11, 2, h) || !digits(s, 14, 2, mi) || !digits(s, 17, 2, sec) ||
        !digits(s, 20, 3, ms))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59)
        return false;
    const std::int64_t days = days_from_civil(y, mo, d);
    out = ((days * 24 + h) * 60 + mi) * 60000 + static_cast<std::int64_t>(sec) * 1000 + ms;
    return true;
}

std::string format_iso_millis(std::int64_t ms) {
    const std::int64_t days = floor_div(ms, 86400000);
    const std::int64_t rest = ms - days * 86400000;
    std::int64_t y;
    unsigned m, d;
    civil_from_days(days, y, m, d);
    char buf[64];
    const int n = std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ",
                                static_cast<long long>(y), m, d,
                                static_cast<unsigned>(rest / 3600000),
                                static_cast<unsigned>(rest / 60000 % 60),
                                static_cast<unsigned>(rest / 1000 % 60),
                                static_cast<unsigned>(rest % 1000));
    return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
}

std::string format_http_date(std::time_t secs) {
    const std::int64_t t = static_cast<std::int64_t>(secs);
    const std::int64_t days = floor_div(t, 86400);
    const std::int64_t rest = t - days * 86400;
    std::int64_t y;
    unsigned m, d;
    civil_from_days(days, y, m, d);
    const std::int64_t wd = ((days % 7) + 7) % 7;
    char buf[64];
    const int n = std::snprintf(buf, sizeof buf, "%s, %02u %s %04lld %02u:%02u:%02u GMT",
                                kDays[wd], d, kMonths[m - 1], static_cast<long long>(y),
                                static_cast<unsigned>(rest / 3600),
                                static_cast<unsigned>(rest / 60 % 60),
                                static_cast<unsigned>(rest % 60));
    return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
}

const std::string& cached_http_date() {
    thread_local std::time_t last = -1;
    thread_local std::string value;
    const std::time_t now = std::time(nullptr);
    if (now != last) {
        value = format_http_date(now);
        last = now;
    }
    return value;
}

bool compute_work(std::string_view body, std::string& out) {
    // No exceptions for syntax errors: a discarded value means "not JSON".
    const json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object()) return false;  // also catches the discarded value

    const auto product = doc.find("product");
    const auto request_id = doc.find("requestId");
    const auto group = doc.find("group");
    if (product == doc.end() || !product->is_string() || request_id == doc.end() ||
        !request_id->is_string() || group == doc.end() || !group->is_object())
        return false;

    const auto kind = group->find("kind");
    const auto deflt = group->find("default");
    const auto balance = group->find("balance");
    const auto dates = group->find("dates");
    if (kind == group->end() || !kind->is_string() || deflt == group->end() ||
        !deflt->is_boolean() || balance == group->end() || !balance->is_number() ||
        dates == group->end() || !dates->is_array() || dates->empty())
        return false;

    std::int64_t min_ms = 0, max_ms = 0;
    bool first = true;
    for (const json& d : *dates) {
        if (!d.is_string()) return false;
        std::int64_t ms;
        if (!parse_iso_millis(d.get_ref<const std::string&>(), ms)) return false;
        if (first || ms < min_ms) min_ms = ms;
        if (first || ms > max_ms) max_ms = ms;
        first = false;
    }

    json client = json::object();
    client["balance"] = *balance;  // the same number, as parsed
    client["minDate"] = format_iso_millis(min_ms);
    client["maxDate"] = format_iso_millis(max_ms);
    json answer = json::object();
    answer["product"] = *product;
    answer["requestId"] = *request_id;
    answer["client"] = std::move(client);
    try {
        out = answer.dump();
    } catch (const json::exception&) {
        return false;  // not reachable: the parser accepts only valid UTF-8
    }
    return true;
}

}  // namespace nb
