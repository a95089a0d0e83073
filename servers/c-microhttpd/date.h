/* Strict parsing and formatting of the contract's timestamps:
 * exactly YYYY-MM-DDTHH:MM:SS.sssZ (24 characters), proleptic Gregorian, UTC. */
#ifndef DATE_H
#define DATE_H

#include <stddef.h>
#include <stdint.h>

#define DATE_LEN 24

/* Parses s[0..n) into milliseconds since 1970-01-01T00:00:00.000Z.
 * Returns 0 on success, -1 when the text is not a valid timestamp. */
int date_parse(const char *s, size_t n, int64_t *ms);

/* Writes ms as YYYY-MM-DDTHH:MM:SS.sssZ plus a NUL into out[DATE_LEN + 1].
 * ms must be within years 0000-9999 (date_parse only yields those). */
void date_format(int64_t ms, char out[DATE_LEN + 1]);

#endif
