/* POST /work: parse the JSON document, validate it, compute the answer. */
#ifndef WORK_H
#define WORK_H

#include <stddef.h>

/* Returns 200 and sets *out to the JSON answer (malloc'd, *out_len bytes, no NUL
 * counted; the caller frees it with free()), or returns 400 with *out = NULL when
 * the body is not a valid work document. */
int work_run(const char *body, size_t len, char **out, size_t *out_len);

#endif
