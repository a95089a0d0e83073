#include "date.h"

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* n digits at s, each '0'-'9' (no sign, no space); -1 if any is not a digit. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int date_parse(const char *s, size_t n, int64_t *ms)
{
    if (n != DATE_LEN || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
        s[19] != '.' || s[23] != 'Z')
        return -1;
    int year = digits(s, 4), month = digits(s + 5, 2), day = digits(s + 8, 2);
    int hour = digits(s + 11, 2), minute = digits(s + 14, 2), second = digits(s + 17, 2);
    int milli = digits(s + 20, 3);
    if (year < 0 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour < 0 ||
        hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || milli < 0)
        return -1;
    int64_t days = days_from_civil(year, month, day);
    *ms = ((days * 24 + hour) * 60 + minute) * 60000 + second * 1000 + milli;
    return 0;
}

void date_format(int64_t ms, char out[DATE_LEN + 1])
{
    int64_t days = ms / 86400000, rem = ms % 86400000;
    if (rem < 0) {
        rem += 86400000;
        days--;
    }
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    int milli = (int)(rem % 1000), second = (int)(rem / 1000 % 60), minute = (int)(rem / 60000 % 60),
        hour = (int)(rem / 3600000);
    int v[7] = {(int)y, m, d, hour, minute, second, milli};
    static const int width[7] = {4, 2, 2, 2, 2, 2, 3};
    static const char after[7] = {'-', '-', 'T', ':', ':', '.', 'Z'};
    char *p = out;
    for (int i = 0; i < 7; i++) {
        for (int k = width[i] - 1; k >= 0; k--) {
            p[k] = (char)('0' + v[i] % 10);
            v[i] /= 10;
        }
        p += width[i];
        *p++ = after[i];
    }
    *p = '\0';
}
