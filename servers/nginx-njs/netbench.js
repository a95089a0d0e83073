// netbench server in njs, nginx's JavaScript module (contract/CONTRACT.md).
//
// nginx does the HTTP: keep-alive, Connection: close, chunked request bodies,
// the Date header, framing. These js_content handlers only compute answers.
// The same file is loaded by the njs command-line tool in test/unit.js, which
// calls parseDate and compute directly.

// The contract's timestamp shape. njs hands regular expressions to PCRE, where
// `$` also matches before a final "\n": parseDate checks the length as well.
var DATE_RE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/;

// A contract timestamp as milliseconds since the epoch, or NaN.
// Date.parse alone is lenient (it turns 2021-02-29 into 1 March, 24:00 into
// the next day, second 60 into the next minute): the round trip through
// toISOString rejects every date it had to adjust, and only those.
function parseDate(s) {
    if (typeof s !== 'string' || s.length !== 24 || !DATE_RE.test(s)) {
        return NaN;
    }
    var t = Date.parse(s);
    if (isNaN(t) || new Date(t).toISOString() !== s) {
        return NaN;
    }
    return t;
}

function isObject(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// The answer to a /work document (already JSON-parsed), or null when the
// document breaks the contract.
function compute(doc) {
    if (!isObject(doc)) {
        return null;
    }
    var group = doc.group;
    if (typeof doc.product !== 'string' || typeof doc.requestId !== 'string' || !isObject(group)) {
        return null;
    }
    var balance = group.balance;
    var dates = group.dates;
    if (typeof group.kind !== 'string' || typeof group['default'] !== 'boolean'
        || typeof balance !== 'number' || !isFinite(balance)   // 1e400 parses as Infinity
        || !Array.isArray(dates) || dates.length === 0) {
        return null;
    }
    var min = Infinity;
    var max = -Infinity;
    for (var i = 0; i < dates.length; i++) {
        var t = parseDate(dates[i]);
        if (isNaN(t)) {
            return null;
        }
        if (t < min) {
            min = t;
        }
        if (t > max) {
            max = t;
        }
    }
    return {
        product: doc.product,
        requestId: doc.requestId,
        client: {
            balance: balance,
            minDate: new Date(min).toISOString(),
            maxDate: new Date(max).toISOString(),
        },
    };
}

function text(r, status, body) {
    r.headersOut['Content-Type'] = 'text/plain';
    r.return(status, body);
}

function allowed(r, methods) {
    if (methods.indexOf(r.method) >= 0) {
        return true;
    }
    r.headersOut['Allow'] = methods.join(', ');
    text(r, 405, 'method not allowed');
    return false;
}

// GET /blank
function blank(r) {
    if (allowed(r, ['GET', 'HEAD'])) {
        text(r, 200, 'OK');
    }
}

// POST /work. nginx has read the whole body before calling the handler; the
// configuration keeps it in one memory buffer (client_body_buffer_size =
// client_max_body_size, client_body_in_single_buffer), so requestText has it.
function work(r) {
    if (!allowed(r, ['POST'])) {
        return;
    }
    var body = r.requestText;
    if (typeof body !== 'string') {
        text(r, 400, 'bad request: no body');
        return;
    }
    var doc;
    try {
        doc = JSON.parse(body);
    } catch (e) {
        text(r, 400, 'bad request: not JSON');
        return;
    }
    var answer = compute(doc);
    if (answer === null) {
        text(r, 400, 'bad request');
        return;
    }
    r.headersOut['Content-Type'] = 'application/json';
    r.return(200, JSON.stringify(answer));
}

// GET /echo/<text>: r.uri is the path without the query string.
function echo(r) {
    if (allowed(r, ['GET', 'HEAD'])) {
        text(r, 200, r.uri.substring('/echo/'.length));
    }
}

export default { blank, work, echo, parseDate, compute };
