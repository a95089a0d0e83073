import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { createHash, randomBytes } from 'node:crypto';
import grpc from '@grpc/grpc-js';
import pg from 'pg';
import WebSocket from 'ws';
import {
  chooseEncoding,
  createServer,
  createGrpcServer,
  createH2cServer,
  createHandler,
  createPool,
  createSecureServer,
  hostPort,
  loadWorkService,
  parsePort,
  noneMatch,
  parseInt32,
  parseListQuery,
  parseRowQuery,
  poolSize,
  clampQueries,
  formatCents,
  parsePage,
  renderFortunes,
  renderRow,
  sessionId,
  SessionStore,
  SESSION_IDLE_MS,
} from '../server.js';

const EXAMPLE = {
  product: 'WidgetPro-7',
  requestId: '5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59',
  group: {
    kind: 'retail',
    default: true,
    balance: 1234.56,
    dates: ['2020-01-12T10:53:17.773Z', '2019-03-01T00:00:00.000Z', '2021-07-30T23:59:59.999Z'],
  },
};

const EXAMPLE_ANSWER = {
  product: 'WidgetPro-7',
  requestId: '5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59',
  client: {
    balance: 1234.56,
    minDate: '2019-03-01T00:00:00.000Z',
    maxDate: '2021-07-30T23:59:59.999Z',
  },
};

/** Starts a server on a free loopback port; returns its base URL and a stop function. */
async function start(root, options) {
  const server = createServer(root, options);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

async function request(url, init) {
  const res = await fetch(url, init);
  const body = await res.text();
  assert.ok(res.headers.get('date'), `${url}: no Date header`);
  assert.ok(!Number.isNaN(Date.parse(res.headers.get('date'))), `${url}: bad Date header`);
  return { status: res.status, headers: res.headers, body };
}

function post(url, body) {
  return request(url, {
    method: 'POST',
    // fetch asks for gzip, deflate and br by default, and /work compresses
    // (json-comp, tested below with a client that leaves bodies as sent).
    headers: { 'content-type': 'application/json; charset=utf-8', 'accept-encoding': 'identity' },
    body,
  });
}

describe('netbench contract', () => {
  let srv;
  before(async () => {
    srv = await start(undefined);
  });
  after(() => srv.stop());

  test('GET /blank', async () => {
    const a = await request(`${srv.url}/blank`);
    assert.equal(a.status, 200);
    assert.equal(a.body, 'OK');
    assert.equal(a.headers.get('content-type'), 'text/plain');
    assert.equal(a.headers.get('content-length'), '2');
  });

  test('POST /work: the example', async () => {
    const a = await post(`${srv.url}/work`, JSON.stringify(EXAMPLE));
    assert.equal(a.status, 200);
    assert.equal(a.headers.get('content-type'), 'application/json');
    assert.equal(a.headers.get('content-length'), String(Buffer.byteLength(a.body)));
    assert.deepEqual(JSON.parse(a.body), EXAMPLE_ANSWER);
  });

  test('POST /work: .000 milliseconds, extra fields, one date', async () => {
    const doc = {
      x: [1],
      product: 'p',
      requestId: 'r',
      group: { kind: 'k', default: false, balance: -1.5e3, dates: ['2000-01-01T00:00:00.000Z'], extra: null },
    };
    const a = await post(`${srv.url}/work`, JSON.stringify(doc));
    assert.equal(a.status, 200);
    assert.deepEqual(JSON.parse(a.body), {
      product: 'p',
      requestId: 'r',
      client: { balance: -1500, minDate: '2000-01-01T00:00:00.000Z', maxDate: '2000-01-01T00:00:00.000Z' },
    });
  });

  test('POST /work: chunked request body', async () => {
    const text = new TextEncoder().encode(JSON.stringify(EXAMPLE));
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(text.subarray(0, 30));
        controller.enqueue(text.subarray(30));
        controller.close();
      },
    });
    // A stream body of unknown length goes out with Transfer-Encoding: chunked.
    const a = await request(`${srv.url}/work`, { method: 'POST', body, duplex: 'half' });
    assert.equal(a.status, 200);
    assert.deepEqual(JSON.parse(a.body), EXAMPLE_ANSWER);
  });

  const group = (g) => JSON.stringify({ product: 'p', requestId: 'r', group: g });
  const good = { kind: 'k', default: true, balance: 1, dates: ['2020-01-12T10:53:17.773Z'] };
  const without = (key) => {
    const g = { ...good };
    delete g[key];
    return group(g);
  };
  const badCases = {
    'not JSON': '{"product":',
    'trailing garbage': group(good) + 'x',
    'not an object': '[1,2]',
    null: 'null',
    'empty body': '',
    'missing product': JSON.stringify({ requestId: 'r', group: good }),
    'missing requestId': JSON.stringify({ product: 'p', group: good }),
    'missing group': JSON.stringify({ product: 'p', requestId: 'r' }),
    'group not an object': group('g'),
    'group an array': group([good]),
    'missing kind': without('kind'),
    'missing default': without('default'),
    'missing balance': without('balance'),
    'missing dates': without('dates'),
    'null product': JSON.stringify({ product: null, requestId: 'r', group: good }),
    'product a number': JSON.stringify({ product: 7, requestId: 'r', group: good }),
    'default "yes"': group({ ...good, default: 'yes' }),
    'balance a string': group({ ...good, balance: '1' }),
    'balance too large': `{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1e400,"dates":["2020-01-12T10:53:17.773Z"]}}`,
    'dates a string': group({ ...good, dates: '2020-01-12T10:53:17.773Z' }),
    'date a number': group({ ...good, dates: [1] }),
    'date null': group({ ...good, dates: [null] }),
    'empty dates': group({ ...good, dates: [] }),
    'invalid date': group({ ...good, dates: ['2020-01-12T10:53:17.773Z', '2020-13-45T99:00:00.000Z'] }),
    yesterday: group({ ...good, dates: ['yesterday'] }),
    '30 February': group({ ...good, dates: ['2020-02-30T00:00:00.000Z'] }),
    'hour 24': group({ ...good, dates: ['2020-01-01T24:00:00.000Z'] }),
    'no milliseconds': group({ ...good, dates: ['2020-01-12T10:53:17Z'] }),
    offset: group({ ...good, dates: ['2020-01-12T10:53:17.773+01:00'] }),
  };
  for (const [name, body] of Object.entries(badCases)) {
    test(`POST /work 400: ${name}`, async () => {
      const a = await post(`${srv.url}/work`, body);
      assert.equal(a.status, 400, a.body);
      assert.ok(a.headers.get('content-length'));
    });
  }

  test('GET /echo/<text>', async () => {
    for (const [path, want] of [
      ['/echo/abc-1.2_x~y', 'abc-1.2_x~y'],
      ['/echo/hello?q=1&r', 'hello'],
      ['/echo/', ''],
      ['/echo/Z9-._~Z9-._~', 'Z9-._~Z9-._~'],
    ]) {
      const a = await request(srv.url + path);
      assert.equal(a.status, 200, path);
      assert.equal(a.body, want, path);
      assert.equal(a.headers.get('content-type'), 'text/plain', path);
    }
  });

  test('unknown paths are 404', async () => {
    for (const path of ['/nope', '/', '/echo', '/blank/x', '/workx']) {
      assert.equal((await request(srv.url + path)).status, 404, path);
    }
    assert.equal((await post(`${srv.url}/`, JSON.stringify(EXAMPLE))).status, 404);
    // A known path with another method: 404 or 405.
    assert.ok([404, 405].includes((await request(`${srv.url}/work`)).status));
  });

  test('keep-alive: many requests', async () => {
    for (let i = 0; i < 20; i++) {
      const a = await request(`${srv.url}/echo/n${i}`);
      assert.equal(a.body, `n${i}`);
    }
  });
});

describe('"/" compat mode', () => {
  test('argument 0: "/" answers as /blank', async () => {
    const srv = await start('0');
    try {
      const a = await request(`${srv.url}/`);
      assert.equal(a.status, 200);
      assert.equal(a.body, 'OK');
    } finally {
      await srv.stop();
    }
  });

  test('argument 1: "/" answers as /work', async () => {
    const srv = await start('1');
    try {
      const a = await post(`${srv.url}/`, JSON.stringify(EXAMPLE));
      assert.equal(a.status, 200);
      assert.deepEqual(JSON.parse(a.body), EXAMPLE_ANSWER);
    } finally {
      await srv.stop();
    }
  });
});

// -- db -----------------------------------------------------------------------

/** The contract's example row, id 1, as JSON text. */
const ROW_1_JSON =
  '{"id":1,"name":"item-1","description":"Row 1 of the netbench items table: \\"seeded\\", fixed & checked.",' +
  '"quantity":31,"price":79.19,"updated":"2020-01-01T00:20:34.567Z"}';

/** Row i of contract/db/schema.sql, as the contract says /db answers it. */
function expectedRow(i) {
  return {
    id: i,
    name: `item-${i}`,
    description: `Row ${i} of the netbench items table: "seeded", fixed & checked.`,
    quantity: (i * 31) % 1000,
    price: ((i * 7919) % 100000) / 100,
    updated: new Date(Date.UTC(2020, 0, 1) + i * 1234567).toISOString(),
  };
}

describe('queries parameter', () => {
  test('clamped as TechEmpower does', () => {
    for (const [q, want] of [
      ['', 1],
      ['queries=', 1],
      ['queries=foo', 1],
      ['queries=0', 1],
      ['queries=1.5', 1],
      ['queries=20', 20],
      ['queries=501', 500],
    ]) {
      assert.equal(clampQueries(new URLSearchParams(q)), want, q);
    }
  });
});

describe('fortunes page', () => {
  test('sorted by message with the added row, every message escaped', () => {
    const page = renderFortunes([
      { id: 11, message: '<script>alert("x");</script>' },
      { id: 1, message: 'fortune: & more' },
    ]);
    assert.ok(!page.includes('<script>'), page);
    const script = page.indexOf('&lt;script&gt;');
    const added = page.indexOf('Additional fortune added at request time.');
    const amp = page.indexOf('fortune: &amp; more');
    assert.ok(script > 0 && script < added && added < amp, page);
  });
});

describe('db parameters and rows', () => {
  const q = (s) => new URLSearchParams(s);

  test('32-bit integers', () => {
    for (const [s, want] of [
      ['1', 1],
      ['10000', 10000],
      ['0', 0],
      ['2147483647', 2147483647],
      ['-2147483648', -2147483648],
      ['007', 7],
    ]) {
      assert.equal(parseInt32(s), want, s);
    }
    const bad = [null, '', 'abc', '1.5', '1e3', ' 1', '1 ', '+1', '0x10', '2147483648', '-2147483649', '9'.repeat(20)];
    for (const s of bad) {
      assert.equal(parseInt32(s), null, String(s));
    }
  });

  test('/db?id=N', () => {
    assert.equal(parseRowQuery(q('id=42')), 42);
    for (const s of ['', 'id=', 'id=abc', 'id=1.5', 'id=2147483648', 'from=1']) {
      assert.equal(parseRowQuery(q(s)), null, s);
    }
  });

  test('/db/list?from=N&count=M', () => {
    assert.deepEqual(parseListQuery(q('from=1')), { from: 1, count: 100 });
    assert.deepEqual(parseListQuery(q('from=9999&count=1')), { from: 9999, count: 1 });
    assert.deepEqual(parseListQuery(q('from=5&count=1000')), { from: 5, count: 1000 });
    const bad = [
      '',
      'count=5',
      'from=',
      'from=x',
      'from=2147483648',
      'from=1&count=',
      'from=1&count=0',
      'from=1&count=1001',
      'from=1&count=-1',
      'from=1&count=1.5',
    ];
    for (const s of bad) {
      assert.equal(parseListQuery(q(s)), null, s);
    }
  });

  test('DATABASE_POOL_SIZE', () => {
    assert.equal(poolSize(undefined), 4);
    assert.equal(poolSize(''), 4);
    assert.equal(poolSize('8'), 8);
    for (const s of ['0', '-1', 'x', '2.5']) assert.throws(() => poolSize(s), s);
    assert.equal(createPool({}), null);
  });

  test('a row as node-postgres returns it renders as the contract example', () => {
    // numeric arrives as a string, timestamptz as a Date.
    const row = {
      id: 1,
      name: 'item-1',
      description: 'Row 1 of the netbench items table: "seeded", fixed & checked.',
      quantity: 31,
      price: '79.19',
      updated: new Date('2020-01-01T00:20:34.567Z'),
    };
    assert.equal(JSON.stringify(renderRow(row)), ROW_1_JSON);
    assert.deepEqual(renderRow(row), expectedRow(1));
    // Three digits of milliseconds even when they are zero; UTC always.
    const whole = renderRow({ ...row, price: '1000.00', updated: new Date('2021-06-01T12:00:00+02:00') });
    assert.equal(whole.updated, '2021-06-01T10:00:00.000Z');
    assert.equal(JSON.stringify(whole.price), '1000');
  });

  test('without DATABASE_URL: /db answers 503, bad parameters 400', async () => {
    const srv = await start(undefined, { pool: null });
    try {
      assert.equal((await request(`${srv.url}/db?id=1`)).status, 503);
      assert.equal((await request(`${srv.url}/db/list?from=1`)).status, 503);
      assert.equal((await request(`${srv.url}/db?id=abc`)).status, 400);
      assert.equal((await request(`${srv.url}/db/list?from=1&count=0`)).status, 400);
      assert.equal((await request(`${srv.url}/blank`)).body, 'OK');
    } finally {
      await srv.stop();
    }
  });
});

const DATABASE_URL = process.env.DATABASE_URL;

const dbSkip = DATABASE_URL ? false : 'DATABASE_URL is not set: start one with scripts/pg-dev.sh';

describe('db against PostgreSQL (DATABASE_URL)', { skip: dbSkip }, () => {
  let srv;
  let pool;
  let admin;
  before(async () => {
    pool = createPool({ DATABASE_URL, DATABASE_POOL_SIZE: '4' });
    srv = await start(undefined, { pool });
    admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
  });
  after(async () => {
    await srv.stop();
    await pool.end();
    await admin.end();
  });

  const json = async (path, status = 200) => {
    const a = await request(srv.url + path);
    assert.equal(a.status, status, `${path}: ${a.body}`);
    if (status === 200) assert.equal(a.headers.get('content-type'), 'application/json');
    return status === 200 ? JSON.parse(a.body) : a.body;
  };

  test('/db?id=N: the contract example and other rows', async () => {
    assert.deepEqual(await json('/db?id=1'), JSON.parse(ROW_1_JSON));
    for (const i of [2, 1000, 4321, 10000]) assert.deepEqual(await json(`/db?id=${i}`), expectedRow(i));
  });

  test('/db/list', async () => {
    const all = await json('/db/list?from=1');
    assert.equal(all.length, 100);
    assert.deepEqual(all, Array.from({ length: 100 }, (_, k) => expectedRow(k + 1)));
    assert.deepEqual(await json('/db/list?from=500&count=1'), [expectedRow(500)]);
    assert.deepEqual(await json('/db/list?from=9999&count=5'), [expectedRow(9999), expectedRow(10000)]);
    assert.deepEqual(await json('/db/list?from=10001'), []);
    assert.equal((await json('/db/list?from=1&count=1000')).length, 1000);
  });

  test('errors', async () => {
    for (const path of ['/db?id=0', '/db?id=10001', '/db?id=-5', '/db?id=2147483647']) await json(path, 404);
    const bad = ['/db?id=abc', '/db?id=1.5', '/db?id=', '/db', '/db?id=2147483648'];
    bad.push('/db/list', '/db/list?from=', '/db/list?from=1&count=0', '/db/list?from=1&count=1001');
    for (const path of bad) await json(path, 400);
  });

  test('answers follow the database', async () => {
    const id = 7777;
    try {
      await admin.query(
        "UPDATE items SET name = 'changed', quantity = 1, price = 12345.60, updated = '1999-12-31T23:59:59.001Z' " +
          'WHERE id = $1',
        [id],
      );
      assert.deepEqual(await json(`/db?id=${id}`), {
        ...expectedRow(id),
        name: 'changed',
        quantity: 1,
        price: 12345.6,
        updated: '1999-12-31T23:59:59.001Z',
      });
    } finally {
      const r = expectedRow(id);
      await admin.query('UPDATE items SET name = $2, quantity = $3, price = $4, updated = $5 WHERE id = $1', [
        id,
        r.name,
        r.quantity,
        r.price,
        r.updated,
      ]);
    }
    assert.deepEqual(await json(`/db?id=${id}`), expectedRow(id));
  });
});

// -- ws -----------------------------------------------------------------------

/** Opens a WebSocket to the server's /ws, offering no extension. */
async function openWs(srv) {
  const ws = new WebSocket(`ws://127.0.0.1:${srv.port}/ws`, { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return ws;
}

/** The next message on `ws`, as `{ data, isBinary }`. */
function nextMessage(ws) {
  return new Promise((resolve, reject) => {
    const onMessage = (data, isBinary) => {
      ws.off('close', onClose);
      resolve({ data, isBinary });
    };
    const onClose = (code) => {
      ws.off('message', onMessage);
      reject(new Error(`closed (${code}) before a message came`));
    };
    ws.once('message', onMessage);
    ws.once('close', onClose);
  });
}

describe('ws echo', () => {
  let srv;
  let ws;
  before(async () => {
    srv = await start(undefined);
    ws = await openWs(srv);
  });
  after(async () => {
    ws.terminate();
    await srv.stop();
  });

  test('handshake: no extension', async () => {
    const other = new WebSocket(`ws://127.0.0.1:${srv.port}/ws`); // offers permessage-deflate
    const res = await new Promise((resolve, reject) => {
      other.once('upgrade', resolve);
      other.once('error', reject);
    });
    assert.equal(res.statusCode, 101);
    assert.equal(res.headers['sec-websocket-extensions'], undefined);
    other.terminate();
  });

  test('text, binary and empty messages keep their type and payload', async () => {
    for (const [payload, binary] of [
      ['hello', false],
      ['ünïcödé ✓', false],
      ['', false],
      [Buffer.alloc(0), true],
      [randomBytes(125), true],
      [randomBytes(126), true],
      [randomBytes(70000), true],
    ]) {
      const got = nextMessage(ws);
      ws.send(payload, { binary });
      const { data, isBinary } = await got;
      assert.equal(isBinary, binary);
      assert.deepEqual(data, Buffer.from(payload));
    }
  });

  test('64 KiB text and binary messages', async () => {
    const text = 'x'.repeat(64 * 1024);
    const bytes = randomBytes(64 * 1024);
    let got = nextMessage(ws);
    ws.send(text);
    assert.equal((await got).data.toString(), text);
    got = nextMessage(ws);
    ws.send(bytes);
    assert.deepEqual((await got).data, bytes);
  });

  test('many messages come back in order', async () => {
    const want = Array.from({ length: 50 }, (_, i) => `m${i}`);
    const got = [];
    const done = new Promise((resolve) => {
      const on = (data) => {
        got.push(data.toString());
        if (got.length === want.length) {
          ws.off('message', on);
          resolve();
        }
      };
      ws.on('message', on);
    });
    for (const m of want) ws.send(m);
    await done;
    assert.deepEqual(got, want);
  });

  test('ping gets a pong with the same payload', async () => {
    const pong = new Promise((resolve) => ws.once('pong', resolve));
    ws.ping(Buffer.from('are you there'));
    assert.equal((await pong).toString(), 'are you there');
  });

  test('a fragmented message with a ping between its fragments', async () => {
    const pong = new Promise((resolve) => ws.once('pong', resolve));
    const got = nextMessage(ws);
    ws.send('one-', { fin: false });
    ws.ping('mid');
    ws.send('two-', { fin: false });
    ws.send('three', { fin: true });
    assert.equal((await pong).toString(), 'mid');
    const { data, isBinary } = await got;
    assert.equal(isBinary, false);
    assert.equal(data.toString(), 'one-two-three');
  });

  test('close is answered with the same code', async () => {
    const other = await openWs(srv);
    const closed = new Promise((resolve) => other.once('close', (code) => resolve(code)));
    other.close(4001);
    assert.equal(await closed, 4001);
  });

  test('an unmasked client frame closes the connection without an echo', async () => {
    const sock = net.connect(srv.port, '127.0.0.1');
    const received = [];
    sock.on('data', (d) => received.push(d));
    const ended = new Promise((resolve) => sock.on('close', resolve));
    sock.write(
      'GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    // An unmasked text frame "hi".
    sock.write(Buffer.from([0x81, 0x02, 0x68, 0x69]));
    await ended;
    const all = Buffer.concat(received);
    const head = all.indexOf('\r\n\r\n');
    assert.match(all.subarray(0, head).toString(), /^HTTP\/1\.1 101 /);
    assert.match(all.subarray(0, head).toString(), /Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=/i);
    const frames = all.subarray(head + 4);
    // Either nothing or a close frame with code 1002, never the echo.
    if (frames.length > 0) {
      assert.equal(frames[0], 0x88);
      assert.equal(frames.readUInt16BE(2), 1002);
    }
  });

  test('/ws without an upgrade, and an upgrade elsewhere', async () => {
    assert.ok([400, 404, 426].includes((await request(`${srv.url}/ws`)).status));
    const other = new WebSocket(`ws://127.0.0.1:${srv.port}/blank`);
    other.on('error', () => {}); // terminate() below, mid-handshake, reports one
    const res = await new Promise((resolve) => other.once('unexpected-response', (req, r) => resolve(r)));
    assert.equal(res.statusCode, 404);
    other.terminate();
  });
});

// -- static, upload, json-comp (contract 1.2) ---------------------------------

/** The contract's static files and their SHA-256 (CONTRACT.md, "static"). */
const STATIC_FILES = [
  ['14k', 14 * 1024, '57a8ca1d858dbeaeac461a9c9cf2bb09a737493e9846b161c4ad840e42d613be'],
  ['1m', 1024 * 1024, '3f055e97e631e61d7f5b9e428abbbcfb07255bc181245e235f5fa8d676d99f3c'],
];

/** The contract's formula for a static file of `size` bytes, as contract/static/make.py writes it. */
function staticBytes(size) {
  const alphabet = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
  const out = Buffer.alloc(size);
  let s = BigInt(size);
  for (let i = 0; i < size; i++) {
    s = (1103515245n * s + 12345n) % 2147483648n;
    out[i] = i % 64 === 63 ? 10 : alphabet[Number((s >> 16n) % 64n)];
  }
  return out;
}

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/**
 * One request through node:http's client, which (unlike fetch) leaves a
 * compressed body as it came. Returns `{ status, headers, body }`, body a Buffer.
 */
function raw(port, method, path, headers = {}, body = undefined) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('static', () => {
  let srv;
  let dir;
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'node-http-static-'));
    await fs.mkdir(path.join(dir, 'static'));
    for (const [name, size, digest] of STATIC_FILES) {
      const data = staticBytes(size);
      assert.equal(sha256(data), digest, `the test's formula makes ${name} wrong`);
      await fs.writeFile(path.join(dir, 'static', name), data);
    }
    await fs.writeFile(path.join(dir, 'secret'), 'outside');
    srv = await start(undefined, { staticDir: path.join(dir, 'static') });
  });
  after(async () => {
    await srv.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  for (const [name, size] of STATIC_FILES) {
    test(`GET /static/${name}: bytes, Content-Length, ETag, Last-Modified`, async () => {
      const a = await raw(srv.port, 'GET', `/static/${name}`);
      assert.equal(a.status, 200);
      assert.ok(a.body.equals(staticBytes(size)), `${a.body.length} bytes, not the file`);
      assert.equal(a.headers['content-length'], String(size));
      assert.equal(a.headers['transfer-encoding'], undefined);
      assert.match(a.headers.etag, /^(W\/)?"[^"]+"$/);
      const lastModified = Date.parse(a.headers['last-modified']);
      assert.ok(lastModified <= Date.parse(a.headers.date), a.headers['last-modified']);
      assert.equal(new Date(lastModified).toUTCString(), a.headers['last-modified']);
      const again = await raw(srv.port, 'GET', `/static/${name}`);
      assert.equal(again.headers.etag, a.headers.etag);
    });

    test(`GET /static/${name}: If-None-Match`, async () => {
      const { etag } = (await raw(srv.port, 'HEAD', `/static/${name}`)).headers;
      const bare = etag.replace(/^W\//, '');
      for (const inm of [etag, bare, `"other", ${etag}`, '*']) {
        const a = await raw(srv.port, 'GET', `/static/${name}`, { 'If-None-Match': inm });
        assert.equal(a.status, 304, inm);
        assert.equal(a.body.length, 0, inm);
        assert.equal(a.headers.etag, etag);
      }
      const other = await raw(srv.port, 'GET', `/static/${name}`, { 'If-None-Match': '"other"' });
      assert.equal(other.status, 200);
      assert.equal(other.body.length, size);
    });
  }

  test("only the folder's own files", async () => {
    const paths = ['/static/nope', '/static/', '/static/..%2Fsecret', '/static/../secret', '/static/14k/x'];
    for (const p of [...paths, '/static/.', '/static/.hidden']) {
      assert.equal((await raw(srv.port, 'GET', p)).status, 404, p);
    }
  });

  test('without the folder: 404', async () => {
    const other = await start(undefined, { staticDir: path.join(dir, 'missing') });
    try {
      assert.equal((await raw(other.port, 'GET', '/static/14k')).status, 404);
    } finally {
      await other.stop();
    }
  });

  test('ETag comparison is weak', () => {
    assert.ok(noneMatch('"a"', 'W/"a"'));
    assert.ok(noneMatch('W/"a"', 'W/"a"'));
    assert.ok(noneMatch(' "x" , W/"a"', 'W/"a"'));
    assert.ok(noneMatch('*', 'W/"a"'));
    assert.ok(!noneMatch('"b"', 'W/"a"'));
    assert.ok(!noneMatch(undefined, 'W/"a"'));
  });
});

describe('upload', () => {
  let srv;
  before(async () => {
    srv = await start(undefined);
  });
  after(() => srv.stop());

  const upload = (body, headers = {}) =>
    raw(srv.port, 'POST', '/upload', { 'Content-Type': 'application/octet-stream', ...headers }, body);

  const check = (a, sent) => {
    assert.equal(a.status, 200, a.body.toString());
    assert.equal(a.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(a.body), { length: sent.length, sha256: sha256(sent) });
  };

  test('the contract example: 1,024 zero bytes', async () => {
    const a = await upload(Buffer.alloc(1024));
    assert.equal(
      a.body.toString(),
      '{"length":1024,"sha256":"5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef"}',
    );
  });

  test('8 MiB with Content-Length, and chunked', async () => {
    const body = randomBytes(8 * 1024 * 1024);
    check(await upload(body), body);
    // node:http's client sends a body written in pieces without a length chunked.
    const a = await new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: srv.port, method: 'POST', path: '/upload', agent: false },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < body.length; i += 1 << 20) req.write(body.subarray(i, i + (1 << 20)));
      req.end();
    });
    check(a, body);
  });

  test('an empty body', async () => {
    check(await upload(Buffer.alloc(0)), Buffer.alloc(0));
  });

  for (const length of ['16777217', '10000000000']) {
    test(`Content-Length ${length}: 413 from the head, then the connection closes`, async () => {
      const sock = net.connect(srv.port, '127.0.0.1');
      sock.on('error', () => {}); // the server may reset what it did not read
      const received = [];
      sock.on('data', (d) => received.push(d));
      const closed = new Promise((resolve) => sock.on('close', resolve));
      sock.write(
        'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n' +
          `Content-Length: ${length}\r\n\r\n`,
      );
      sock.write(Buffer.alloc(64 * 1024));
      await closed;
      const answer = Buffer.concat(received).toString('latin1');
      assert.match(answer, /^HTTP\/1\.1 413 /);
      assert.match(answer, /\r\nConnection: close\r\n/i);
    });
  }

  test('a chunked body past 16 MiB: 413', async () => {
    const status = await new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: srv.port, method: 'POST', path: '/upload', agent: false },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.on('error', () => {}); // the rest of the body meets a closed connection
      const chunk = Buffer.alloc(1 << 20);
      let sent = 0;
      const more = () => {
        while (sent < 20) {
          sent++;
          if (!req.write(chunk)) {
            req.once('drain', more);
            return;
          }
        }
        req.end();
      };
      more();
      setTimeout(() => reject(new Error('no answer')), 10000).unref();
    });
    assert.equal(status, 413);
  });
});

describe('json-comp', () => {
  let srv;
  let plain;
  before(async () => {
    srv = await start(undefined);
    plain = await raw(srv.port, 'POST', '/work', { 'Content-Type': 'application/json' }, JSON.stringify(EXAMPLE));
  });
  after(() => srv.stop());

  const work = (acceptEncoding, body = JSON.stringify(EXAMPLE)) =>
    raw(srv.port, 'POST', '/work', { 'Content-Type': 'application/json', 'Accept-Encoding': acceptEncoding }, body);

  test('without Accept-Encoding: plain, with Vary', () => {
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    assert.deepEqual(JSON.parse(plain.body), EXAMPLE_ANSWER);
  });

  const decoders = { gzip: zlib.gunzipSync, br: zlib.brotliDecompressSync };
  for (const [ae, coding] of [
    ['gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['deflate, gzip;q=0.5', 'gzip'],
    ['gzip, br', 'gzip'],
    ['*', 'gzip'],
    ['br', 'br'],
    ['gzip;q=0, br', 'br'],
  ]) {
    test(`Accept-Encoding: ${ae} gets ${coding}`, async () => {
      const a = await work(ae);
      assert.equal(a.status, 200);
      assert.equal(a.headers['content-encoding'], coding);
      assert.equal(a.headers['content-type'], 'application/json');
      assert.equal(a.headers.vary, 'Accept-Encoding');
      assert.equal(a.headers['content-length'], String(a.body.length));
      assert.ok(decoders[coding](a.body).equals(plain.body));
    });
  }

  for (const ae of ['identity', 'gzip;q=0', 'br;q=0, gzip;q=0', '*;q=0', 'compress']) {
    test(`Accept-Encoding: ${ae} gets the plain answer`, async () => {
      const a = await work(ae);
      assert.equal(a.status, 200);
      assert.equal(a.headers['content-encoding'], undefined);
      assert.ok(a.body.equals(plain.body));
    });
  }

  test('a bad document is 400 whatever Accept-Encoding says', async () => {
    assert.equal((await work('gzip', '{"product":')).status, 400);
  });

  test('chooseEncoding', () => {
    for (const [header, want] of [
      [undefined, null],
      ['', null],
      ['gzip', 'gzip'],
      ['x-gzip', 'gzip'],
      ['gzip;q=0.001', 'gzip'],
      ['gzip; q=0', null],
      ['gzip;q=0, *', 'br'],
      ['gzip;q=0, br;q=0, *', null],
      ['br;q=1, *;q=0.5', 'gzip'],
      ['*;q=0, br', 'br'],
      ['deflate', null],
      ['gzipx, xbr', null],
    ]) {
      assert.equal(chooseEncoding(header), want, String(header));
    }
  });
});

describe('app', () => {
  // The contract's LABEL list and files, read here rather than from the server.
  const LABEL = [
    "Tom & Jerry's cheese board",
    '<b>bold</b> move of the week',
    '"Quoted" goods, boxed',
    "O'Brien's pick for winter",
    'a < b > c, the ordered set',
  ];
  const contractFile = (name) => fs.readFile(new URL(`../../../contract/app/${name}`, import.meta.url), 'utf8');
  let css;
  let js;
  let srv;
  before(async () => {
    css = await contractFile('app.css');
    js = await contractFile('app.js');
    srv = await start(undefined);
  });
  after(() => srv.stop());

  /** GET /app?page=K with an optional cookie; the body decoded when gzipped. */
  async function page(k, cookie, acceptEncoding) {
    const headers = {};
    if (cookie !== undefined) headers.Cookie = cookie;
    if (acceptEncoding !== undefined) headers['Accept-Encoding'] = acceptEncoding;
    const a = await raw(srv.port, 'GET', `/app?page=${k}`, headers);
    const html = (a.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(a.body) : a.body).toString('utf8');
    return { ...a, html };
  }

  /** The cookie's name=value from a Set-Cookie, or undefined when none was sent. */
  function setCookie(a) {
    const all = a.headers['set-cookie'];
    if (all === undefined) return undefined;
    assert.equal(all.length, 1, 'one Set-Cookie');
    return all[0].split(';')[0];
  }

  /** A cell's text with its character references decoded; a raw < or a bare & fails. */
  function cellText(raw) {
    assert.ok(!raw.includes('<'), `raw < in ${raw}`);
    return raw
      .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);|&/gi, (m, ref) => {
        assert.ok(ref !== undefined, `bare & in ${raw}`);
        if (ref[0] === '#') {
          const hex = ref[1] === 'x' || ref[1] === 'X';
          return String.fromCodePoint(hex ? parseInt(ref.slice(2), 16) : Number(ref.slice(1)));
        }
        const named = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[ref];
        assert.ok(named !== undefined, `unknown reference ${m}`);
        return named;
      })
      .trim();
  }

  /** The page's <tr>s of <td> cells, each an array of cell texts. */
  function rows(html) {
    return [...html.matchAll(/<tr>(.*?)<\/tr>/gs)]
      .map((m) => [...m[1].matchAll(/<td>(.*?)<\/td>/gs)].map((c) => cellText(c[1])))
      .filter((cells) => cells.length > 0);
  }

  const visitsOf = (a) => Number(rows(a.html)[0][1]);

  /** Page K's item rows from the contract's formula (toFixed as an independent check of the formatting). */
  function expectedItems(k) {
    const out = [];
    for (let i = 1; i <= 50; i++) {
      const q = ((k * 7 + i * 13) % 100) + 1;
      const c = (k * 7919 + i * 104729) % 100000;
      out.push([
        String((k - 1) * 50 + i),
        `${LABEL[(k + i) % 5]}, no. ${k}.${i}`,
        String(q),
        (c / 100).toFixed(2),
        ((q * c) / 100).toFixed(2),
      ]);
    }
    return out;
  }

  test("a session's visits go 1, 2, 3 with one Set-Cookie, since fixed", async () => {
    const before = Date.now();
    const first = await page(7);
    assert.equal(first.status, 200);
    const cookie = setCookie(first);
    assert.match(cookie, /^sid=[0-9a-f]{32}$/);
    assert.match(first.headers['set-cookie'][0], /; Path=\/; HttpOnly$/);
    const [[, visits], [, since]] = rows(first.html);
    assert.equal(visits, '1');
    assert.ok(Number(since) >= before && Number(since) <= Date.now(), since);
    for (const want of ['2', '3']) {
      const a = await page(7, cookie);
      assert.equal(setCookie(a), undefined);
      assert.deepEqual(rows(a.html).slice(0, 2), [['visits', want], ['since', since]]);
    }
  });

  test('two sessions count apart; other cookies are ignored', async () => {
    const a = setCookie(await page(1));
    const b = setCookie(await page(1));
    assert.notEqual(a, b);
    assert.equal(visitsOf(await page(2, a)), 2);
    assert.equal(visitsOf(await page(2, `theme=dark; ${b}; lang=en`)), 2);
    assert.equal(visitsOf(await page(2, a)), 3);
  });

  test('a made-up cookie gets a new session and a new id', async () => {
    const madeUp = 'sid=00112233445566778899aabbccddeeff';
    const a = await page(3, madeUp);
    const cookie = setCookie(a);
    assert.ok(cookie !== undefined && cookie !== madeUp);
    assert.equal(visitsOf(a), 1);
  });

  for (const k of [1, 4711, 100000]) {
    test(`page ${k}: head, the formula's rows escaped, the stylesheet and script byte for byte`, async () => {
      const a = await page(k);
      assert.equal(a.status, 200);
      assert.equal(a.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(a.headers['cache-control'], 'no-store');
      assert.ok(a.html.startsWith('<!DOCTYPE html>'), a.html.slice(0, 40));
      assert.ok(a.html.includes(`<title>Orders, page ${k}</title>`));
      assert.ok(a.html.includes(`<h1>Orders, page ${k}</h1>`));
      assert.ok(a.html.includes('<form method="post" action="/app/logout">'));
      assert.ok(a.html.includes(`<style>\n${css}</style>`), 'app.css');
      assert.ok(a.html.includes(`<script>\n${js}</script>`), 'app.js');
      const all = rows(a.html);
      assert.equal(all.length, 52);
      assert.deepEqual(all.slice(2), expectedItems(k));
    });
  }

  test('the labels are escaped in the HTML itself', async () => {
    const { html } = await page(1);
    for (const raw of ['<b>', 'a < b', 'Tom & ', '"Quoted"']) assert.ok(!html.includes(raw), raw);
    assert.ok(html.includes('&lt;b&gt;bold'));
    assert.ok(html.includes('Tom &amp; Jerry'));
    assert.ok(html.includes('a &lt; b &gt; c'));
  });

  test('gzip when Accept-Encoding allows it, plain otherwise, Vary always', async () => {
    const plain = await page(12);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    assert.equal(plain.headers['content-length'], String(plain.body.length));
    for (const ae of ['gzip', 'deflate, gzip;q=0.5', '*']) {
      const a = await page(12, undefined, ae);
      assert.equal(a.headers['content-encoding'], 'gzip', ae);
      assert.equal(a.headers.vary, 'Accept-Encoding');
      assert.equal(a.headers['content-length'], String(a.body.length));
      assert.ok(a.body.length < plain.body.length);
      assert.deepEqual(rows(a.html).slice(2), expectedItems(12));
      assert.equal(a.html.replace(/<td>\d{13}<\/td>/, ''), plain.html.replace(/<td>\d{13}<\/td>/, ''));
    }
    for (const ae of ['identity', 'gzip;q=0', 'br', '*;q=0']) {
      const a = await page(12, undefined, ae);
      assert.equal(a.headers['content-encoding'], undefined, ae);
      assert.deepEqual(rows(a.html).slice(2), expectedItems(12));
    }
  });

  test('8 connections x 25 pages on one session: visits 2..201, each once', async () => {
    const cookie = setCookie(await page(5));
    const seen = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let n = 0; n < 25; n++) {
          const a = await page(5, cookie, 'gzip');
          assert.equal(a.status, 200);
          assert.equal(setCookie(a), undefined);
          seen.push(visitsOf(a));
        }
      }),
    );
    seen.sort((x, y) => x - y);
    assert.deepEqual(seen, Array.from({ length: 200 }, (_, i) => i + 2));
  });

  test('logout ends the session; the old cookie then gets a new one', async () => {
    const cookie = setCookie(await page(9));
    assert.equal(visitsOf(await page(9, cookie)), 2);
    const out = await raw(srv.port, 'POST', '/app/logout', { Cookie: cookie, 'Content-Length': '0' });
    assert.equal(out.status, 200);
    const again = await page(9, cookie);
    assert.equal(visitsOf(again), 1);
    const fresh = setCookie(again);
    assert.ok(fresh !== undefined && fresh !== cookie);
    // Without a cookie, or with a dead one: 200 all the same.
    assert.equal((await raw(srv.port, 'POST', '/app/logout', { 'Content-Length': '0' })).status, 200);
    assert.equal((await raw(srv.port, 'POST', '/app/logout', { Cookie: cookie, 'Content-Length': '0' })).status, 200);
    assert.equal((await raw(srv.port, 'GET', '/app/logout')).status, 405);
  });

  test('a bad page is 400 and leaves the session untouched', async () => {
    const cookie = setCookie(await page(2));
    const bad = ['?page=0', '?page=100001', '?page=abc', '?page=', '', '?page=-1', '?page=1.5', '?page=%2B1', '?x=1'];
    for (const q of bad) {
      const a = await raw(srv.port, 'GET', `/app${q}`, { Cookie: cookie });
      assert.equal(a.status, 400, q);
      assert.equal(a.headers['set-cookie'], undefined, q);
    }
    assert.equal(visitsOf(await page(2, cookie)), 2);
  });

  test('parsePage, sessionId, formatCents', () => {
    for (const [q, want] of [
      ['page=1', 1],
      ['page=100000', 100000],
      ['page=007', 7],
      ['page=100001', null],
      ['page=0', null],
      ['page=', null],
      ['', null],
      ['page=1e3', null],
      ['page=' + '9'.repeat(400), null],
    ]) {
      assert.equal(parsePage(new URLSearchParams(q)), want, q);
    }
    assert.equal(sessionId(undefined), null);
    assert.equal(sessionId('a=1; sid=abc ;b=2'), 'abc');
    assert.equal(sessionId('xsid=abc'), null);
    for (const [c, want] of [[0, '0.00'], [5, '0.05'], [99999, '999.99'], [9999900, '99999.00'], [1200, '12.00']]) {
      assert.equal(formatCents(c), want);
    }
  });

  test('sessions idle past 10 minutes are swept, not sooner', () => {
    const store = new SessionStore();
    const { id } = store.open(null, 0);
    store.sweep(SESSION_IDLE_MS);
    assert.equal(store.open(id, SESSION_IDLE_MS).created, false);
    store.sweep(2 * SESSION_IDLE_MS + 1);
    const again = store.open(id, 2 * SESSION_IDLE_MS + 1);
    assert.equal(again.created, true);
    assert.notEqual(again.id, id);
  });
});

// -- tls, h2, h2c, grpc (contract 1.5) ------------------------------------------

/**
 * A self-signed certificate for localhost and 127.0.0.1, made by openssl in a
 * temporary folder (never in git), with its key in PKCS#8 as the runner gives it.
 */
async function makeCertificate() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'node-http-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-addext',
        'basicConstraints=critical,CA:FALSE',
      ],
      { stdio: 'pipe' },
    );
    return {
      cert: await fs.readFile(path.join(dir, 'cert.pem')),
      key: await fs.readFile(path.join(dir, 'key.pem')),
    };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Starts a node:http2 server on a free loopback port; stop() ends its sessions too. */
async function startH2(server) {
  const sessions = new Set();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  const sockets = new Set();
  // HTTP/1.1 connections of the TLS listener are no sessions.
  server.on('secureConnection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    stop: () =>
      new Promise((resolve) => {
        for (const s of sessions) s.destroy();
        for (const s of sockets) s.destroy();
        server.close(resolve);
      }),
  };
}

/** One request on an HTTP/2 session: `{ status, headers, body }`, the body a Buffer. */
function h2request(session, { method = 'GET', path: p, headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': method, ':path': p, ...headers });
    let head;
    const chunks = [];
    stream.on('response', (h) => {
      head = h;
    });
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => resolve({ status: head?.[':status'], headers: head ?? {}, body: Buffer.concat(chunks) }));
    stream.on('error', reject);
    stream.end(body);
  });
}

/** A connected HTTP/2 client session. */
function h2connect(url, options = {}) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url, options);
    session.once('connect', () => {
      session.off('error', reject);
      resolve(session);
    });
    session.once('error', reject);
  });
}

/** /blank, /echo and /work (good and bad), all at once on one session, each checked. */
async function concurrentStreams(session) {
  const work = (doc) =>
    h2request(session, {
      method: 'POST',
      path: '/work',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(doc),
    });
  const calls = [];
  for (let i = 0; i < 10; i++) {
    calls.push(
      h2request(session, { path: '/blank' }).then((a) => {
        assert.equal(a.status, 200);
        assert.equal(a.headers['content-type'], 'text/plain');
        assert.equal(a.body.toString(), 'OK');
      }),
      h2request(session, { path: `/echo/s${i}` }).then((a) => assert.equal(a.body.toString(), `s${i}`)),
      work({ ...EXAMPLE, requestId: `r${i}` }).then((a) => {
        assert.equal(a.status, 200);
        assert.equal(a.headers['content-type'], 'application/json');
        assert.deepEqual(JSON.parse(a.body), { ...EXAMPLE_ANSWER, requestId: `r${i}` });
      }),
      work({ ...EXAMPLE, group: { ...EXAMPLE.group, dates: ['2020-13-45T99:00:00.000Z'] } }).then((a) =>
        assert.equal(a.status, 400),
      ),
    );
  }
  const seen = new Set();
  const watch = (stream) => seen.add(stream.id);
  session.on('stream', watch);
  await Promise.all(calls);
  session.off('stream', watch);
  // Every answer carries a Date, as on HTTP/1.1.
  const a = await h2request(session, { path: '/nope' });
  assert.equal(a.status, 404);
  assert.ok(!Number.isNaN(Date.parse(a.headers.date)), a.headers.date);
}

describe('tls: HTTP/1.1 and h2 on one TLS listener', () => {
  let tls;
  let srv;
  before(async () => {
    tls = await makeCertificate();
    srv = await startH2(createSecureServer(undefined, tls));
  });
  after(() => srv.stop());

  /** GET over TLS with node:https; ALPN as given (undefined: none offered). */
  const get = (p, alpn) =>
    new Promise((resolve, reject) => {
      const req = https.get(
        {
          host: '127.0.0.1',
          port: srv.port,
          path: p,
          ca: tls.cert,
          servername: 'localhost',
          ALPNProtocols: alpn,
          agent: false,
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ res, alpn: res.socket.alpnProtocol, body: Buffer.concat(chunks).toString() }));
        },
      );
      req.on('error', reject);
    });

  test('handshake with the given certificate, /blank over HTTP/1.1 (ALPN http/1.1)', async () => {
    const a = await get('/blank', ['http/1.1']);
    assert.equal(a.alpn, 'http/1.1');
    assert.equal(a.res.httpVersion, '1.1');
    assert.equal(a.res.statusCode, 200);
    assert.equal(a.body, 'OK');
    assert.ok(a.res.headers.date);
    assert.equal(a.res.headers['content-length'], '2');
  });

  test('HTTP/1.1 without ALPN', async () => {
    const a = await get('/echo/plain', undefined);
    assert.equal(a.alpn, false);
    assert.equal(a.res.httpVersion, '1.1');
    assert.equal(a.body, 'plain');
  });

  test('POST /work over HTTP/1.1 and TLS', async () => {
    const answer = await new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: srv.port,
          method: 'POST',
          path: '/work',
          ca: tls.cert,
          servername: 'localhost',
          headers: { 'content-type': 'application/json' },
          agent: false,
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(EXAMPLE));
    });
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), EXAMPLE_ANSWER);
  });

  test('wss: the WebSocket echo over TLS', async () => {
    const ws = new WebSocket(`wss://localhost:${srv.port}/ws`, { ca: tls.cert });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const got = new Promise((resolve) => ws.once('message', (data) => resolve(data.toString())));
    ws.send('over tls');
    assert.equal(await got, 'over tls');
    ws.terminate();
  });

  test('h2 by ALPN: many concurrent streams', async () => {
    const session = await h2connect(`https://localhost:${srv.port}`, { ca: tls.cert });
    try {
      assert.equal(session.alpnProtocol, 'h2');
      await concurrentStreams(session);
      // No WebSocket over HTTP/2: the answer has no Upgrade header.
      const ws = await h2request(session, { path: '/ws' });
      assert.equal(ws.status, 426);
      assert.equal(ws.headers.upgrade, undefined);
    } finally {
      session.close();
    }
  });
});

describe('h2c: HTTP/2 with prior knowledge', () => {
  let srv;
  let session;
  before(async () => {
    srv = await startH2(createH2cServer(undefined));
    session = await h2connect(`http://127.0.0.1:${srv.port}`);
  });
  after(async () => {
    session.close();
    await srv.stop();
  });

  test('many concurrent streams', () => concurrentStreams(session));

  test('a body over 1 MiB is 413, and the session goes on', async () => {
    const a = await h2request(session, { method: 'POST', path: '/work', body: Buffer.alloc((1 << 20) + 1, 32) });
    assert.equal(a.status, 413);
    assert.equal(a.headers.connection, undefined);
    assert.equal((await h2request(session, { path: '/blank' })).body.toString(), 'OK');
  });

  test('static, upload and json-comp over HTTP/2', async () => {
    const bytes = randomBytes(100000);
    const up = await h2request(session, { method: 'POST', path: '/upload', body: bytes });
    assert.equal(up.status, 200);
    assert.deepEqual(JSON.parse(up.body), {
      length: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    const gz = await h2request(session, {
      method: 'POST',
      path: '/work',
      headers: { 'accept-encoding': 'gzip' },
      body: JSON.stringify(EXAMPLE),
    });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(JSON.parse(zlib.gunzipSync(gz.body)), EXAMPLE_ANSWER);
    const page = await h2request(session, { path: '/app?page=3' });
    assert.equal(page.status, 200);
    assert.match(page.headers['set-cookie'][0], /^sid=[0-9a-f]{32};/);
  });
});

describe('one handler behind every listener', () => {
  test('a session made over HTTP/1.1 is the same over h2c', async () => {
    const handler = createHandler(undefined);
    const h1 = await start(undefined, { handler });
    const h2 = await startH2(createH2cServer(undefined, { handler }));
    const session = await h2connect(`http://127.0.0.1:${h2.port}`);
    try {
      const first = await fetch(`${h1.url}/app?page=1`);
      await first.text();
      const cookie = first.headers.get('set-cookie').split(';')[0];
      const again = await h2request(session, { path: '/app?page=1', headers: { cookie } });
      assert.equal(again.status, 200);
      assert.equal(again.headers['set-cookie'], undefined);
    } finally {
      session.close();
      await h2.stop();
      await h1.stop();
      handler.close();
    }
  });
});

describe('grpc: netbench.Work/Compute', () => {
  let server;
  let client;
  before(async () => {
    server = createGrpcServer();
    const port = await new Promise((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    const Work = grpc.makeClientConstructor(loadWorkService(), 'Work');
    client = new Work(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  after(() => {
    client.close();
    server.forceShutdown();
  });

  const compute = (message) =>
    new Promise((resolve) => client.Compute(message, (err, reply) => resolve({ err, reply })));

  test('the example is answered right', async () => {
    const { err, reply } = await compute(EXAMPLE);
    assert.equal(err, null);
    assert.deepEqual(reply, EXAMPLE_ANSWER);
  });

  test('proto3 defaults are values: empty strings, default false, balance 0', async () => {
    const doc = {
      product: '',
      requestId: '',
      group: { kind: '', default: false, balance: 0, dates: ['2000-02-29T23:59:59.999Z'] },
    };
    const { err, reply } = await compute(doc);
    assert.equal(err, null);
    assert.deepEqual(reply, {
      product: '',
      requestId: '',
      client: { balance: 0, minDate: '2000-02-29T23:59:59.999Z', maxDate: '2000-02-29T23:59:59.999Z' },
    });
  });

  test('many calls in flight at once, each its own answer', async () => {
    const calls = Array.from({ length: 30 }, (_, i) => {
      const day = String((i % 28) + 1).padStart(2, '0');
      const doc = {
        ...EXAMPLE,
        requestId: `r${i}`,
        group: { ...EXAMPLE.group, dates: [`2021-02-${day}T01:02:03.004Z`, '2021-03-01T00:00:00.000Z'] },
      };
      return compute(doc).then(({ err, reply }) => {
        assert.equal(err, null);
        assert.equal(reply.requestId, `r${i}`);
        assert.equal(reply.client.minDate, `2021-02-${day}T01:02:03.004Z`);
      });
    });
    await Promise.all(calls);
  });

  const invalid = {
    'no group': { product: 'p', requestId: 'r' },
    'empty dates': { ...EXAMPLE, group: { ...EXAMPLE.group, dates: [] } },
    'an invalid date': {
      ...EXAMPLE,
      group: { ...EXAMPLE.group, dates: ['2020-01-12T10:53:17.773Z', '2020-13-45T99:00:00.000Z'] },
    },
    '29 February of a common year': { ...EXAMPLE, group: { ...EXAMPLE.group, dates: ['2019-02-29T00:00:00.000Z'] } },
    'no milliseconds': { ...EXAMPLE, group: { ...EXAMPLE.group, dates: ['2020-01-12T10:53:17Z'] } },
  };
  for (const [name, doc] of Object.entries(invalid)) {
    test(`INVALID_ARGUMENT: ${name}`, async () => {
      const { err, reply } = await compute(doc);
      assert.equal(reply, undefined);
      assert.equal(err?.code, grpc.status.INVALID_ARGUMENT, String(err));
    });
  }
});

describe('listener configuration', () => {
  test('ports from the environment', () => {
    assert.equal(parsePort('PORT', '8080'), 8080);
    assert.equal(parsePort('PORT', '0'), 0);
    for (const s of ['', 'x', '-1', '65536', '80.5']) assert.throws(() => parsePort('PORT', s), s);
  });

  test('gRPC addresses: IPv6 in brackets', () => {
    assert.equal(hostPort('127.0.0.1', 9), '127.0.0.1:9');
    assert.equal(hostPort('::1', 9), '[::1]:9');
    assert.equal(hostPort('[::1]', 9), '[::1]:9');
  });
});
