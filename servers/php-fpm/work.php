<?php
// The /work rules of contract/CONTRACT.md: date parsing and validation, and
// the answer to a document. No I/O here: index.php serves it, and
// test/unit.php tests it with the php command-line tool.

declare(strict_types=1);

// The contract's timestamp shape, ASCII digits only; \z, since `$` would also
// match before a final "\n".
const NETBENCH_DATE_RE = '/^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z\z/';

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil). mktime/gmmktime cannot be used: they read
 * years 0-100 as 1970-2069.
 */
function netbench_days_from_civil(int $y, int $m, int $d): int
{
    if ($m <= 2) {
        $y--;
    }
    $era = intdiv($y >= 0 ? $y : $y - 399, 400);
    $yoe = $y - $era * 400;
    $doy = intdiv(153 * ($m > 2 ? $m - 3 : $m + 9) + 2, 5) + $d - 1;
    $doe = $yoe * 365 + intdiv($yoe, 4) - intdiv($yoe, 100) + $doy;
    return $era * 146097 + $doe - 719468;
}

/**
 * A contract timestamp as milliseconds since the epoch, or null when it is
 * not one: the exact shape YYYY-MM-DDTHH:MM:SS.sssZ, a day that exists in its
 * month, hour 00-23, minute and second 00-59.
 */
function netbench_parse_date(mixed $s): ?int
{
    if (!is_string($s) || preg_match(NETBENCH_DATE_RE, $s, $f) !== 1) {
        return null;
    }
    [, $y, $mo, $d, $h, $mi, $sec, $ms] = array_map('intval', $f);
    // checkdate takes years 1-32767; the calendar repeats every 400 years,
    // so year 0 (a leap year) is checked as year 400.
    if (!checkdate($mo, $d, $y === 0 ? 400 : $y) || $h > 23 || $mi > 59 || $sec > 59) {
        return null;
    }
    return ((netbench_days_from_civil($y, $mo, $d) * 24 + $h) * 60 + $mi) * 60000 + $sec * 1000 + $ms;
}

/** Milliseconds since the epoch as YYYY-MM-DDTHH:MM:SS.sssZ. */
function netbench_format_date(int $t): string
{
    $ms = $t % 1000;
    if ($ms < 0) {
        $ms += 1000;
    }
    return gmdate('Y-m-d\TH:i:s', intdiv($t - $ms, 1000)) . sprintf('.%03dZ', $ms);
}

/**
 * The answer to a /work document as decoded by json_decode (objects as
 * stdClass, so that a JSON array is never taken for an object), or null when
 * the document breaks the contract.
 */
function netbench_compute(mixed $doc): ?array
{
    if (!$doc instanceof stdClass) {
        return null;
    }
    $product = $doc->product ?? null;
    $requestId = $doc->requestId ?? null;
    $group = $doc->group ?? null;
    if (!is_string($product) || !is_string($requestId) || !$group instanceof stdClass) {
        return null;
    }
    $balance = $group->balance ?? null;
    $dates = $group->dates ?? null;
    if (!is_string($group->kind ?? null) || !is_bool($group->default ?? null)
        || !(is_int($balance) || is_float($balance)) || !is_finite((float) $balance)  // 1e400 decodes as INF
        || !is_array($dates) || $dates === []) {
        return null;
    }
    $min = PHP_INT_MAX;
    $max = PHP_INT_MIN;
    foreach ($dates as $s) {
        $t = netbench_parse_date($s);
        if ($t === null) {
            return null;
        }
        $min = min($min, $t);
        $max = max($max, $t);
    }
    return [
        'product' => $product,
        'requestId' => $requestId,
        'client' => [
            'balance' => $balance,
            'minDate' => netbench_format_date($min),
            'maxDate' => netbench_format_date($max),
        ],
    ];
}

/**
 * A request body to [status, content type, body]: 200 with the JSON answer,
 * or 400. json_decode refuses what is not JSON (NaN, trailing commas,
 * invalid UTF-8, nesting deeper than 512).
 */
function netbench_work(string $body): array
{
    try {
        $doc = json_decode($body, false, 512, JSON_THROW_ON_ERROR);
    } catch (JsonException $e) {
        return [400, 'text/plain', 'bad request: not JSON'];
    }
    $answer = netbench_compute($doc);
    if ($answer === null) {
        return [400, 'text/plain', 'bad request'];
    }
    return [200, 'application/json',
            json_encode($answer, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE)];
}
