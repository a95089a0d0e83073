// Unit tests of netbench.js with the njs command-line tool (the engine nginx
// runs it in): the date rules, the document rules, and every case of
// contract/fixtures. Run from the server's folder:
//
//   njs -t module -p . test/unit.js ../../contract/fixtures
//
// Prints each failure and exits with status 1 if any.

import fs from 'fs';
import nb from 'netbench.js';

var failures = 0;
var checks = 0;

function fail(what) {
    failures++;
    console.log('FAIL ' + what);
}

function check(ok, what) {
    checks++;
    if (!ok) {
        fail(what);
    }
}

// Order-independent JSON equality (numbers compared as numbers).
function same(a, b) {
    if (typeof a !== typeof b || (a === null) !== (b === null)) {
        return false;
    }
    if (typeof a !== 'object' || a === null) {
        return a === b;
    }
    if (Array.isArray(a) !== Array.isArray(b)) {
        return false;
    }
    var ka = Object.keys(a).sort();
    var kb = Object.keys(b).sort();
    if (ka.length !== kb.length) {
        return false;
    }
    for (var i = 0; i < ka.length; i++) {
        if (ka[i] !== kb[i] || !same(a[ka[i]], b[kb[i]])) {
            return false;
        }
    }
    return true;
}

// Valid dates, with their milliseconds since the epoch when known.
var VALID = [
    ['2020-01-12T10:53:17.773Z', 1578826397773],
    ['1970-01-01T00:00:00.000Z', 0],
    ['1969-12-31T23:59:59.999Z', -1],
    ['0000-01-01T00:00:00.000Z', -62167219200000],
    ['2020-02-29T00:00:00.000Z', 1582934400000],  // leap year
    ['2000-02-29T23:59:59.999Z', null],           // leap year (divisible by 400)
    ['0000-02-29T12:00:00.000Z', null],           // year 0 is a leap year
    ['0050-06-15T12:00:00.000Z', null],           // not 1950: no two-digit year rule
    ['9999-12-31T23:59:59.999Z', 253402300799999],
    ['2021-12-31T23:59:59.999Z', null],
];

var INVALID = [
    '2020-13-45T99:00:00.000Z',
    '2021-02-29T00:00:00.000Z',  // not a leap year
    '1900-02-29T00:00:00.000Z',  // not a leap year (divisible by 100)
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
    '2020-01-12T10:53:17.773',
    ' 2020-01-12T10:53:17.773Z',
    '2020-01-12T10:53:17.773Z\n',  // PCRE's $ matches before a final newline
    '2020-01-12T10:53:17.773Z ',
    '+2020-01-12T10:53:17.773Z',
    '+002020-01-12T10:53:17.773Z',
    '\uff12020-01-12T10:53:17.773Z',  // a full-width digit
    'yesterday',
    '',
    null,
    1578826397773,
    ['2020-01-12T10:53:17.773Z'],
];

VALID.forEach(function (c) {
    var t = nb.parseDate(c[0]);
    check(!isNaN(t), 'valid date rejected: ' + c[0]);
    if (c[1] !== null) {
        check(t === c[1], c[0] + ' is ' + t + ', not ' + c[1]);
    }
    // It comes back unchanged as min and max.
    var a = nb.compute({product: 'p', requestId: 'r',
                        group: {kind: 'k', 'default': true, balance: 1, dates: [c[0]]}});
    check(a !== null && a.client.minDate === c[0] && a.client.maxDate === c[0],
          'round trip of ' + c[0] + ': ' + JSON.stringify(a));
});

INVALID.forEach(function (s) {
    check(isNaN(nb.parseDate(s)), 'invalid date accepted: ' + JSON.stringify(s));
});

function docWith(group) {
    var g = {kind: 'k', 'default': true, balance: 1, dates: ['2020-01-12T10:53:17.773Z']};
    Object.keys(group).forEach(function (k) { g[k] = group[k]; });
    return {product: 'p', requestId: 'r', group: g};
}

var REJECTED = {
    'balance true': docWith({balance: true}),
    'balance a string': docWith({balance: '1'}),
    'balance null': docWith({balance: null}),
    'balance infinite (1e400)': JSON.parse('{"product":"p","requestId":"r","group":{"kind":"k",'
        + '"default":true,"balance":1e400,"dates":["2020-01-12T10:53:17.773Z"]}}'),
    'default 1': docWith({'default': 1}),
    'default null': docWith({'default': null}),
    'kind a number': docWith({kind: 1}),
    'dates empty': docWith({dates: []}),
    'dates a string': docWith({dates: '2020-01-12T10:53:17.773Z'}),
    'dates an object': docWith({dates: {a: '2020-01-12T10:53:17.773Z'}}),
    'one bad date': docWith({dates: ['2020-01-12T10:53:17.773Z', '2020-02-30T00:00:00.000Z']}),
    'group a list': {product: 'p', requestId: 'r', group: [docWith({}).group]},
    'group null': {product: 'p', requestId: 'r', group: null},
    'product null': {product: null, requestId: 'r', group: docWith({}).group},
    'requestId a number': {product: 'p', requestId: 1, group: docWith({}).group},
    'a list': [docWith({})],
    'a string': 'x',
    'null': null,
};
Object.keys(REJECTED).forEach(function (name) {
    check(nb.compute(REJECTED[name]) === null, 'accepted: ' + name);
});

// Balances come back as the same number.
[0, -1500, 1234.56, -0.01, 999999.99, 1e3, 0.1, -1000000].forEach(function (b) {
    var a = nb.compute(docWith({balance: b}));
    check(a !== null && JSON.parse(JSON.stringify(a)).client.balance === b, 'balance ' + b);
});

// Min and max are by time, over any order.
var a = nb.compute(docWith({dates: ['2030-12-31T23:59:59.999Z', '0001-01-01T00:00:00.000Z',
                                    '1999-12-31T23:59:59.999Z', '2000-01-01T00:00:00.000Z']}));
check(a !== null && a.client.minDate === '0001-01-01T00:00:00.000Z'
      && a.client.maxDate === '2030-12-31T23:59:59.999Z', 'min/max: ' + JSON.stringify(a));

// contract/fixtures: every accepted document and every rejected body.
var dir = process.argv[process.argv.length - 1];
function lines(name) {
    return fs.readFileSync(dir + '/' + name, 'utf8').split('\n').filter(function (l) { return l !== ''; });
}
var works = lines('work.jsonl');
var rejected = lines('rejected.jsonl');
check(works.length > 0 && rejected.length > 0, 'fixtures found in ' + dir);
works.forEach(function (line) {
    var c = JSON.parse(line);
    var answer = nb.compute(c.request);
    check(same(answer, c.answer), 'fixture "' + c.name + '": ' + JSON.stringify(answer));
});
rejected.forEach(function (line) {
    var c = JSON.parse(line);
    var doc;
    try {
        doc = JSON.parse(c.body);
    } catch (e) {
        checks++;
        return;  // not JSON: 400
    }
    check(nb.compute(doc) === null, 'fixture "' + c.name + '" accepted');
});

console.log(checks + ' checks, ' + failures + ' failed');
if (failures > 0) {
    throw new Error(failures + ' failed');
}
