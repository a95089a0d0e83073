<?php
// Unit tests of work.php with the php command-line tool: the date rules, the
// document rules, and every case of contract/fixtures. Run from anywhere:
//
//   php test/unit.php [fixtures-dir]
//
// Prints each failure and exits with status 1 if any.

declare(strict_types=1);

require __DIR__ . '/../work.php';

$checks = 0;
$failures = 0;

function check(bool $ok, string $what): void
{
    global $checks, $failures;
    $checks++;
    if (!$ok) {
        $failures++;
        echo "FAIL $what\n";
    }
}

// Order-independent JSON equality, numbers compared as numbers (1e3 == 1000).
function same(mixed $a, mixed $b): bool
{
    if ((is_int($a) || is_float($a)) && (is_int($b) || is_float($b))) {
        return (float) $a === (float) $b;
    }
    if (is_array($a) && is_array($b)) {
        if (array_is_list($a) !== array_is_list($b) || count($a) !== count($b)) {
            return false;
        }
        foreach ($a as $k => $v) {
            if (!array_key_exists($k, $b) || !same($v, $b[$k])) {
                return false;
            }
        }
        return true;
    }
    return $a === $b;
}

function doc_with(array $group): stdClass
{
    $g = array_merge(['kind' => 'k', 'default' => true, 'balance' => 1,
                      'dates' => ['2020-01-12T10:53:17.773Z']], $group);
    return (object) ['product' => 'p', 'requestId' => 'r', 'group' => (object) $g];
}

// Valid dates, with their milliseconds since the epoch when known.
$valid = [
    '2020-01-12T10:53:17.773Z' => 1578826397773,
    '1970-01-01T00:00:00.000Z' => 0,
    '1969-12-31T23:59:59.999Z' => -1,
    '0000-01-01T00:00:00.000Z' => -62167219200000,
    '2020-02-29T00:00:00.000Z' => 1582934400000,  // leap year
    '2000-02-29T23:59:59.999Z' => 951868799999,   // leap year (divisible by 400)
    '0000-02-29T12:00:00.000Z' => -62162078400000, // year 0 is a leap year
    '0050-06-15T12:00:00.000Z' => null,            // not 1950 or 2050, as mktime would read it
    '1600-02-29T00:00:00.000Z' => null,
    '9999-12-31T23:59:59.999Z' => 253402300799999,
    '2021-12-31T23:59:59.999Z' => null,
];
foreach ($valid as $s => $want) {
    $s = (string) $s;
    $t = netbench_parse_date($s);
    check($t !== null, "valid date rejected: $s");
    if ($want !== null) {
        check($t === $want, "$s is " . var_export($t, true) . ", not $want");
    }
    // Formatting gives the same text back, also as min and max.
    check($t !== null && netbench_format_date($t) === $s, "format of $s: "
          . ($t === null ? 'null' : netbench_format_date($t)));
    $a = netbench_compute(doc_with(['dates' => [$s]]));
    check($a !== null && $a['client']['minDate'] === $s && $a['client']['maxDate'] === $s, "round trip of $s");
}
// Every day of a leap and of a common year formats back to itself.
foreach ([2019, 2020, 1900, 2000, 0] as $y) {
    $t = netbench_parse_date(sprintf('%04d-01-01T00:00:00.000Z', $y));
    $days = 0;
    for ($d = 0; $d < 366; $d++) {
        $s = netbench_format_date($t + $d * 86400000);
        if (str_starts_with($s, sprintf('%04d', $y))) {
            $days++;
            check(netbench_parse_date($s) === $t + $d * 86400000, "day $d of $y: $s");
        }
    }
    $leap = $y % 4 === 0 && ($y % 100 !== 0 || $y % 400 === 0);
    check($days === ($leap ? 366 : 365), "$y has $days days");
}

$invalid = [
    '2020-13-45T99:00:00.000Z',
    '2021-02-29T00:00:00.000Z',  // not a leap year
    '1900-02-29T00:00:00.000Z',  // not a leap year (divisible by 100)
    '2020-02-30T00:00:00.000Z',
    '2020-04-31T00:00:00.000Z',
    '2020-00-10T00:00:00.000Z',
    '2020-01-00T00:00:00.000Z',
    '2020-01-32T00:00:00.000Z',
    '2020-01-01T24:00:00.000Z',
    '2020-01-01T23:60:00.000Z',
    '2016-12-31T23:59:60.000Z',  // leap second
    '2020-01-01T00:00:00.+01Z',  // a sign in the milliseconds
    '2020-01-01T00:00:00.-01Z',
    '2020-01-12T10:53:17Z',
    '2020-01-12T10:53:17.77Z',
    '2020-01-12T10:53:17.7730Z',
    '2020-01-12T10:53:17.773z',
    '2020-01-12t10:53:17.773Z',
    '2020-01-12 10:53:17.773Z',
    '2020-1-01T00:00:00.000Z',
    '2020-01-12T10:53:17.773+00:00',
    '2020-01-12T10:53:17.773+01:00',
    '2020-01-12T10:53:17.773',
    ' 2020-01-12T10:53:17.773Z',
    "2020-01-12T10:53:17.773Z\n",  // `$` alone would take it
    '2020-01-12T10:53:17.773Z ',
    '+2020-01-12T10:53:17.773Z',
    '-0001-01-01T00:00:00.000Z',
    "\u{FF12}020-01-12T10:53:17.773Z",  // a full-width digit
    'yesterday',
    '',
    null,
    1578826397773,
    ['2020-01-12T10:53:17.773Z'],
];
foreach ($invalid as $s) {
    check(netbench_parse_date($s) === null, 'invalid date accepted: ' . json_encode($s));
}

$rejected = [
    'balance true' => doc_with(['balance' => true]),
    'balance a string' => doc_with(['balance' => '1']),
    'balance null' => doc_with(['balance' => null]),
    'balance infinite' => doc_with(['balance' => INF]),
    'balance NaN' => doc_with(['balance' => NAN]),
    'default 1' => doc_with(['default' => 1]),
    'default null' => doc_with(['default' => null]),
    'kind a number' => doc_with(['kind' => 1]),
    'dates empty' => doc_with(['dates' => []]),
    'dates a string' => doc_with(['dates' => '2020-01-12T10:53:17.773Z']),
    'dates an object' => doc_with(['dates' => (object) ['a' => '2020-01-12T10:53:17.773Z']]),
    'one bad date' => doc_with(['dates' => ['2020-01-12T10:53:17.773Z', '2020-02-30T00:00:00.000Z']]),
    'group a list' => (object) ['product' => 'p', 'requestId' => 'r', 'group' => [doc_with([])->group]],
    'group null' => (object) ['product' => 'p', 'requestId' => 'r', 'group' => null],
    'product null' => (object) ['product' => null, 'requestId' => 'r', 'group' => doc_with([])->group],
    'requestId a number' => (object) ['product' => 'p', 'requestId' => 1, 'group' => doc_with([])->group],
    'a list' => [doc_with([])],
    'a string' => 'x',
    'null' => null,
];
foreach ($rejected as $name => $doc) {
    check(netbench_compute($doc) === null, "accepted: $name");
}

// Bodies through netbench_work, as index.php serves them.
$good = '{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z"]}}';
check(netbench_work($good)[0] === 200, 'a good body');
foreach ([
    'not JSON' => '{"product":',
    'trailing garbage' => $good . 'x',
    'empty' => '',
    'an array' => '[' . $good . ']',
    'an empty object' => '{}',
    'NaN' => str_replace('"balance":1', '"balance":NaN', $good),
    '1e400' => str_replace('"balance":1', '"balance":1e400', $good),
    'not UTF-8' => "{\"product\":\"\xff\"}",
    'too deep' => str_repeat('[', 1000) . str_repeat(']', 1000),
] as $name => $body) {
    check(netbench_work($body)[0] === 400, "body accepted: $name");
}
// The balance comes back as the same number, and strings unchanged.
foreach (['0', '-1500', '1234.56', '-0.01', '999999.99', '1e3', '0.1', '-1000000', '1.23456e3'] as $b) {
    [$status, $type, $out] = netbench_work(str_replace('"balance":1', '"balance":' . $b, $good));
    check($status === 200 && $type === 'application/json'
          && (float) json_decode($out)->client->balance === (float) $b, "balance $b: $out");
}
[, , $out] = netbench_work('{"product":"a/b é \u00e9 \"q\"","requestId":"\ud83d\ude00","group":{"kind":"k","default":false,"balance":0,"dates":["2020-01-12T10:53:17.773Z"]}}');
check(json_decode($out)->product === 'a/b é é "q"' && json_decode($out)->requestId === "\u{1F600}", "strings: $out");

// Min and max are by time, over any order.
$a = netbench_compute(doc_with(['dates' => ['2030-12-31T23:59:59.999Z', '0001-01-01T00:00:00.000Z',
                                            '1999-12-31T23:59:59.999Z', '2000-01-01T00:00:00.000Z']]));
check($a !== null && $a['client']['minDate'] === '0001-01-01T00:00:00.000Z'
      && $a['client']['maxDate'] === '2030-12-31T23:59:59.999Z', 'min/max: ' . json_encode($a));

// contract/fixtures: every accepted document and every rejected body.
$dir = $argv[1] ?? __DIR__ . '/../../../contract/fixtures';
$works = @file($dir . '/work.jsonl', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES);
$bad = @file($dir . '/rejected.jsonl', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES);
check(is_array($works) && $works !== [] && is_array($bad) && $bad !== [], "fixtures found in $dir");
foreach ($works ?: [] as $line) {
    $case = json_decode($line, true);
    $body = is_string($case['request']) ? $case['request'] : json_encode($case['request']);
    [$status, , $out] = netbench_work($body);
    check($status === 200 && same(json_decode($out, true), $case['answer']), "fixture \"{$case['name']}\": $out");
}
foreach ($bad ?: [] as $line) {
    $case = json_decode($line, true);
    check(netbench_work($case['body'])[0] === 400, "fixture \"{$case['name']}\" accepted");
}

echo "$checks checks, $failures failed\n";
exit($failures > 0 ? 1 : 0);
