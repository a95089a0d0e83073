#include "work.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "date.h"

/* A member that must be present, not null, and of the given type. */
static json_t *field(json_t *obj, const char *key, json_type type)
{
    json_t *v = json_object_get(obj, key);
    return v != NULL && json_typeof(v) == type ? v : NULL;
}

int work_run(const char *body, size_t len, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    /* JSON_DECODE_INT_AS_REAL: every number is a double, so `1e3` and `1000`
     * are the same and no integer is too big for json_int_t. */
    json_t *doc = json_loadb(body, len, JSON_DECODE_INT_AS_REAL, NULL);
    if (doc == NULL)
        return 400;
    json_t *answer = NULL;
    if (!json_is_object(doc))
        goto done;
    json_t *product = field(doc, "product", JSON_STRING);
    json_t *request_id = field(doc, "requestId", JSON_STRING);
    json_t *group = field(doc, "group", JSON_OBJECT);
    if (product == NULL || request_id == NULL || group == NULL)
        goto done;
    json_t *balance = field(group, "balance", JSON_REAL);
    json_t *dates = field(group, "dates", JSON_ARRAY);
    if (field(group, "kind", JSON_STRING) == NULL || !json_is_boolean(json_object_get(group, "default")) ||
        balance == NULL || dates == NULL || json_array_size(dates) == 0)
        goto done;

    int64_t min = INT64_MAX, max = INT64_MIN;
    size_t i;
    json_t *d;
    json_array_foreach(dates, i, d) {
        int64_t ms;
        if (!json_is_string(d) || date_parse(json_string_value(d), json_string_length(d), &ms) != 0)
            goto done;
        if (ms < min)
            min = ms;
        if (ms > max)
            max = ms;
    }
    char min_s[DATE_LEN + 1], max_s[DATE_LEN + 1];
    date_format(min, min_s);
    date_format(max, max_s);

    answer = json_pack("{s:O, s:O, s:{s:f, s:s, s:s}}", "product", product, "requestId", request_id, "client",
                       "balance", json_real_value(balance), "minDate", min_s, "maxDate", max_s);
    if (answer != NULL && (*out = json_dumps(answer, JSON_COMPACT)) != NULL)
        *out_len = strlen(*out);
done:
    json_decref(answer);
    json_decref(doc);
    return *out != NULL ? 200 : 400;
}
