// netbench reference server for Node.js's node:http.
//
// Follows contract/CONTRACT.md: listens on HOST:PORT (defaults 127.0.0.1 and
// 1234), serves /blank, /work and /echo/<text>, exits on SIGTERM. An optional
// first argument "0" or "1" makes "/" answer as /blank or /work.
//
// The optional parts of contract 1.1: /db and /db/list read PostgreSQL
// through node-postgres' Pool (DATABASE_URL, at most DATABASE_POOL_SIZE
// connections); /ws is a WebSocket echo by the ws package, attached to
// node:http's 'upgrade' event. Without DATABASE_URL the server runs all the
// same and /db answers 503.
//
// The optional parts of contract 1.2: /static/14k and /static/1m are read
// from ./static (written there by the build) through fs streams; POST
// /upload streams the body through node:crypto's SHA-256; /work answers are
// compressed by node:zlib (gzip, or brotli when gzip is not allowed) when
// Accept-Encoding allows it.
//
// The optional parts of contract 1.3: /fortunes reads the fortune table
// through the same Pool and renders it with mustache, whose {{ }} escapes
// HTML; /queries and /updates read (and write) World rows, one query each.
//
// The optional part of contract 1.4: GET /app?page=K finds (or creates) a
// session named by the sid cookie in an in-memory Map (node:http has no
// session store), counts the visit, renders templates/app.mustache with
// mustache and gzips it with node:zlib when Accept-Encoding allows gzip;
// POST /app/logout ends the session.
//
// The offers of contract 1.5, each on its own port when its variable is set:
// TLS_PORT is one TLS listener (node:http2's createSecureServer with
// allowHTTP1) that serves HTTP/1.1 and HTTP/2 by ALPN; H2C_PORT is node:http2's
// cleartext server (prior knowledge); both hand their requests to the same
// handler through http2's compatibility API. GRPC_PORT serves
// netbench.Work/Compute with @grpc/grpc-js, its messages loaded from
// contract/grpc/work.proto by @grpc/proto-loader at start-up.

import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import http2 from 'node:http2';
import path from 'node:path';
import process from 'node:process';
import { pipeline } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import zlib from 'node:zlib';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import Mustache from 'mustache';
import pg from 'pg';
import { WebSocketServer } from 'ws';

/** Largest /work request body accepted. */
const MAX_BODY_BYTES = 1 << 20;

/** The contract's timestamp format: YYYY-MM-DDTHH:MM:SS.sssZ. */
const DATE_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function send(res, status, contentType, body) {
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * Connection: close, on HTTP/1.1 only: HTTP/2 has no such header (node:http2
 * throws on it), and ending the stream is all it needs.
 */
function closeAfter(req, res) {
  if (req.httpVersionMajor < 2) res.setHeader('Connection', 'close');
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Parses a contract timestamp to milliseconds since the epoch, or returns NaN.
 * Date.parse alone is lenient (it takes 2021-02-30, for one); the round trip
 * through toISOString rejects any date it had to adjust.
 */
function parseDate(s) {
  if (typeof s !== 'string' || !DATE_RE.test(s)) return NaN;
  const t = Date.parse(s);
  if (Number.isNaN(t) || new Date(t).toISOString() !== s) return NaN;
  return t;
}

/**
 * Validates a /work document (already JSON-parsed) and builds the answer, or
 * returns null when the document breaks the contract.
 */
export function compute(doc) {
  if (!isObject(doc)) return null;
  const { product, requestId, group } = doc;
  if (typeof product !== 'string' || typeof requestId !== 'string' || !isObject(group)) {
    return null;
  }
  const { kind, balance, dates } = group;
  if (
    typeof kind !== 'string' ||
    typeof group.default !== 'boolean' ||
    typeof balance !== 'number' ||
    !Number.isFinite(balance) ||
    !Array.isArray(dates) ||
    dates.length === 0
  ) {
    return null;
  }
  let min = Infinity;
  let max = -Infinity;
  for (const s of dates) {
    const t = parseDate(s);
    if (Number.isNaN(t)) return null;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  return {
    product,
    requestId,
    client: {
      balance,
      minDate: new Date(min).toISOString(),
      maxDate: new Date(max).toISOString(),
    },
  };
}

function blank(req, res) {
  send(res, 200, 'text/plain', 'OK');
}

function work(req, res) {
  // Every /work answer may be compressed or not by Accept-Encoding
  // (json-comp), the 400s as well as the 200s: caches must know.
  res.setHeader('Vary', 'Accept-Encoding');
  const chunks = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (chunk) => {
    if (tooLarge) return;
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      tooLarge = true;
      closeAfter(req, res);
      send(res, 413, 'text/plain', 'body too large');
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (tooLarge) return;
    let doc;
    try {
      doc = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
    } catch {
      send(res, 400, 'text/plain', 'bad request: not JSON');
      return;
    }
    const answer = compute(doc);
    if (answer === null) {
      send(res, 400, 'text/plain', 'bad request');
      return;
    }
    sendCompressible(req, res, JSON.stringify(answer));
  });
  req.on('error', () => {
    // The client went away mid-body; there is no one to answer.
  });
}

function echo(req, res, path) {
  send(res, 200, 'text/plain', path.slice('/echo/'.length));
}

// -- db ----------------------------------------------------------------------

/** The pool size when DATABASE_POOL_SIZE is unset (the contract's minimum). */
const DEFAULT_POOL_SIZE = 4;

/** /db/list's count when the query has none, and its largest allowed value. */
const DEFAULT_COUNT = 100;
const MAX_COUNT = 1000;

// Beyond PostgreSQL's integer range the query itself would fail; the contract
// wants such a number answered 400 like any other bad parameter.
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INTEGER_RE = /^-?[0-9]+$/;

const ROW_SQL = 'SELECT id, name, description, quantity, price, updated FROM items WHERE id = $1';
const LIST_SQL =
  'SELECT id, name, description, quantity, price, updated FROM items WHERE id >= $1 ORDER BY id LIMIT $2';

/** A decimal integer that fits a 32-bit signed integer, or null. */
export function parseInt32(s) {
  if (typeof s !== 'string' || !INTEGER_RE.test(s)) return null;
  const n = Number(s);
  return n >= INT32_MIN && n <= INT32_MAX ? n : null;
}

/** The id of `/db?id=N` (a URLSearchParams), or null for a 400. */
export function parseRowQuery(params) {
  return parseInt32(params.get('id'));
}

/** `{ from, count }` of `/db/list?from=N&count=M` (a URLSearchParams), or null for a 400. */
export function parseListQuery(params) {
  const from = parseInt32(params.get('from'));
  if (from === null) return null;
  const c = params.get('count');
  const count = c === null ? DEFAULT_COUNT : parseInt32(c);
  if (count === null || count < 1 || count > MAX_COUNT) return null;
  return { from, count };
}

/**
 * A row of `items` as node-postgres returns it, in the contract's JSON shape.
 * node-postgres gives numeric as a string (it may not fit a double in
 * general; the contract's prices do) and timestamptz as a Date, whose
 * toISOString is UTC with three digits of milliseconds.
 */
export function renderRow(row) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    quantity: row.quantity,
    price: Number(row.price),
    updated: row.updated.toISOString(),
  };
}

/**
 * The pool size DATABASE_POOL_SIZE asks for (a positive integer; the default
 * when unset or empty). Throws on anything else.
 */
export function poolSize(value) {
  if (value === undefined || value === '') return DEFAULT_POOL_SIZE;
  const n = parseInt32(value);
  if (n === null || n < 1) throw new Error(`DATABASE_POOL_SIZE=${JSON.stringify(value)}: not a positive integer`);
  return n;
}

/** node-postgres' Pool for DATABASE_URL, or null when there is none. */
export function createPool(env) {
  if (!env.DATABASE_URL) return null;
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: poolSize(env.DATABASE_POOL_SIZE) });
  // An idle client whose connection breaks emits 'error' on the pool; without
  // a listener that would end the process.
  pool.on('error', (err) => console.error('server: idle database connection:', err.message));
  return pool;
}

function noDatabase(res) {
  send(res, 503, 'text/plain', 'no database: DATABASE_URL is not set');
}

function databaseFailed(res, err) {
  console.error('server: database:', err.message);
  send(res, 500, 'text/plain', 'database error');
}

function dbRow(req, res, pool, params) {
  const id = parseRowQuery(params);
  if (id === null) {
    send(res, 400, 'text/plain', 'bad request: id must be a 32-bit integer');
  } else if (pool === null) {
    noDatabase(res);
  } else {
    pool.query(ROW_SQL, [id]).then(
      ({ rows }) => {
        if (rows.length === 0) send(res, 404, 'text/plain', 'no such row');
        else send(res, 200, 'application/json', JSON.stringify(renderRow(rows[0])));
      },
      (err) => databaseFailed(res, err),
    );
  }
}

function dbList(req, res, pool, params) {
  const q = parseListQuery(params);
  if (q === null) {
    send(res, 400, 'text/plain', 'bad request: from must be a 32-bit integer, count one from 1 to 1000');
  } else if (pool === null) {
    noDatabase(res);
  } else {
    pool.query(LIST_SQL, [q.from, q.count]).then(
      ({ rows }) => send(res, 200, 'application/json', JSON.stringify(rows.map(renderRow))),
      (err) => databaseFailed(res, err),
    );
  }
}

// -- fortunes ----------------------------------------------------------------

const FORTUNES_SQL = 'SELECT id, message FROM fortune';
const ADDED_FORTUNE = 'Additional fortune added at request time.';
const FORTUNES_TEMPLATE =
  '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>' +
  '<tr><th>id</th><th>message</th></tr>' +
  '{{#rows}}<tr><td>{{id}}</td><td>{{message}}</td></tr>{{/rows}}' +
  '</table></body></html>';
Mustache.parse(FORTUNES_TEMPLATE);

/**
 * The page for the rows read: the added row joins them, sorted by message
 * (JavaScript compares UTF-16 units, which for these rows is code point
 * order), rendered with mustache's HTML escaping.
 */
export function renderFortunes(rows) {
  const all = rows.concat([{ id: 0, message: ADDED_FORTUNE }]);
  all.sort((a, b) => (a.message < b.message ? -1 : a.message > b.message ? 1 : 0));
  return Mustache.render(FORTUNES_TEMPLATE, { rows: all });
}

function fortunes(req, res, pool) {
  if (pool === null) {
    noDatabase(res);
    return;
  }
  pool.query(FORTUNES_SQL).then(
    ({ rows }) => send(res, 200, 'text/html; charset=utf-8', renderFortunes(rows)),
    (err) => databaseFailed(res, err),
  );
}

// -- queries and updates -----------------------------------------------------

const WORLD_ROWS = 10000;
const MAX_QUERIES = 500;
// Named, so node-postgres prepares each once per pooled connection.
const WORLD_READ = { name: 'world-read', text: 'SELECT id, randomnumber FROM world WHERE id = $1' };
const WORLD_WRITE = { name: 'world-write', text: 'UPDATE world SET randomnumber = $1 WHERE id = $2' };

/** `queries=N` clamped as TechEmpower does: not an integer or below 1 is 1, above 500 is 500. */
export function clampQueries(params) {
  const raw = params.get('queries');
  const n = raw !== null && /^-?\d+$/.test(raw) ? Number(raw) : 1;
  if (n < 1) return 1;
  return Math.min(n, MAX_QUERIES);
}

const randomRow = () => 1 + Math.floor(Math.random() * WORLD_ROWS);

/**
 * /queries and /updates: N rows read, each with its own query (in flight
 * together over the Pool); for updates each given a new number and written
 * back, one UPDATE per row.
 */
function world(req, res, pool, params, update) {
  if (pool === null) {
    noDatabase(res);
    return;
  }
  const n = clampQueries(params);
  const reads = [];
  for (let i = 0; i < n; i++) reads.push(pool.query({ ...WORLD_READ, values: [randomRow()] }));
  Promise.all(reads)
    .then(async (results) => {
      const rows = results.map(({ rows: [r] }) => ({ id: r.id, randomNumber: r.randomnumber }));
      if (update) {
        for (const row of rows) row.randomNumber = randomRow();
        await Promise.all(rows.map((r) => pool.query({ ...WORLD_WRITE, values: [r.randomNumber, r.id] })));
      }
      send(res, 200, 'application/json', JSON.stringify(rows));
    })
    .catch((err) => databaseFailed(res, err));
}

// -- ws ----------------------------------------------------------------------

function echoMessages(ws) {
  // ws answers pings and closes by itself; a text message arrives as its
  // UTF-8 bytes (already validated), so it goes back without decoding.
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  // A protocol error (an unmasked frame, bad UTF-8, ...) has already closed
  // the connection with its code; without a listener it would end the process.
  ws.on('error', () => {});
}

// -- static, upload, json-comp (contract 1.2) ---------------------------------

/** Where the build writes the contract's static files (STATIC_DIR elsewhere). */
export const DEFAULT_STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url));

/** The files of /static/: plain names, no path separators. */
const STATIC_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * The ETag of a file from its size and modification time, in the form
 * Express's `etag` package (the one `send` and `serve-static` use) derives
 * from a file's stats: W/"<size hex>-<mtime ms hex>".
 */
export function statTag(stat) {
  return `W/"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
}

/** The opaque part of an entity-tag, without W/ (for weak comparison). */
function opaqueTag(tag) {
  const t = tag.trim();
  return t.startsWith('W/') ? t.slice(2) : t;
}

/**
 * Whether an If-None-Match value names `etag` (weak comparison, RFC 9110
 * §13.1.2), or is `*`.
 */
export function noneMatch(header, etag) {
  if (header === undefined) return false;
  const want = opaqueTag(etag);
  return header.split(',').some((t) => t.trim() === '*' || opaqueTag(t) === want);
}

/**
 * GET /static/<name>: the file opened once, its stats from the open file,
 * 304 when If-None-Match names its ETag, else its bytes streamed from disk
 * (fs read stream) with Content-Length.
 */
function serveStatic(req, res, dir, name) {
  if (!STATIC_NAME_RE.test(name)) {
    notFound(req, res);
    return;
  }
  fs.open(path.join(dir, name), 'r').then(
    async (file) => {
      let stat;
      try {
        stat = await file.stat();
      } catch (err) {
        await file.close();
        throw err;
      }
      if (!stat.isFile()) {
        await file.close();
        notFound(req, res);
        return;
      }
      const etag = statTag(stat);
      const headers = { ETag: etag, 'Last-Modified': stat.mtime.toUTCString() };
      if (noneMatch(req.headers['if-none-match'], etag)) {
        await file.close();
        res.writeHead(304, headers);
        res.end();
        return;
      }
      res.writeHead(200, {
        ...headers,
        'Content-Type': 'application/octet-stream',
        'Content-Length': stat.size,
      });
      if (req.method === 'HEAD') {
        await file.close();
        res.end();
        return;
      }
      // The stream closes the file when it ends or fails; a failure midway
      // destroys the response, whose length then tells the client.
      pipeline(file.createReadStream(), res, () => {});
    },
    () => notFound(req, res),
  ).catch((err) => {
    console.error('server: static:', err.message);
    if (!res.headersSent) send(res, 500, 'text/plain', 'cannot read the file');
    else res.destroy();
  });
}

/** The largest upload body read (CONTRACT.md, "upload"): 16 MiB. */
export const UPLOAD_LIMIT = 16 * 1024 * 1024;

/**
 * 413 with Connection: close. node:http then ends the connection once the
 * answer is written (a FIN after it), reading no more of the body.
 */
function refuseUpload(req, res) {
  closeAfter(req, res);
  send(res, 413, 'text/plain', 'body too large');
}

/**
 * POST /upload: the body's length and SHA-256 (node:crypto), hashed chunk by
 * chunk as it arrives, never held whole. A Content-Length over the limit is
 * refused from the head; a chunked body once it grows past it.
 */
function upload(req, res) {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > UPLOAD_LIMIT) {
    refuseUpload(req, res);
    return;
  }
  const hash = createHash('sha256');
  let length = 0;
  let refused = false;
  req.on('data', (chunk) => {
    if (refused) return;
    length += chunk.length;
    if (length > UPLOAD_LIMIT) {
      refused = true;
      refuseUpload(req, res);
      return;
    }
    hash.update(chunk);
  });
  req.on('end', () => {
    if (refused) return;
    send(res, 200, 'application/json', JSON.stringify({ length, sha256: hash.digest('hex') }));
  });
  req.on('error', () => {
    // The client went away mid-body; there is no one to answer.
  });
}

/**
 * The content coding to answer with for an Accept-Encoding value: 'gzip'
 * when allowed (RFC 9110 §12.5.3: listed, or covered by `*`, without q=0),
 * else 'br' when allowed, else null (plain). gzip first: every client that
 * takes brotli takes gzip, and it is the coding compression middlewares
 * default to.
 */
export function chooseEncoding(header) {
  if (!header) return null;
  const q = new Map();
  for (const item of header.split(',')) {
    const [name, ...params] = item.split(';');
    const coding = name.trim().toLowerCase();
    if (coding === '') continue;
    let weight = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k.trim().toLowerCase() === 'q') weight = Number(v);
    }
    q.set(coding, Number.isNaN(weight) ? 0 : weight);
  }
  const allowed = (coding) => (q.has(coding) ? q.get(coding) > 0 : (q.get('*') ?? 0) > 0);
  if (allowed('gzip') || (q.get('x-gzip') ?? 0) > 0) return 'gzip';
  if (allowed('br')) return 'br';
  return null;
}

/**
 * A 200 JSON answer, compressed by node:zlib at its default settings (on
 * libuv's thread pool, off the event loop) when the request allows gzip or
 * brotli, whatever its size.
 */
function sendCompressible(req, res, body) {
  const coding = chooseEncoding(req.headers['accept-encoding']);
  if (coding === null) {
    send(res, 200, 'application/json', body);
    return;
  }
  const compress = coding === 'gzip' ? zlib.gzip : zlib.brotliCompress;
  compress(body, (err, out) => {
    if (err) {
      console.error('server: compression:', err.message);
      send(res, 200, 'application/json', body);
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Encoding': coding,
      'Content-Length': out.length,
    });
    res.end(out);
  });
}

// -- app (contract 1.4) --------------------------------------------------------

/** Where the contract's stylesheet and script are (the server runs in its own folder). */
export const DEFAULT_APP_DIR = fileURLToPath(new URL('../../contract/app/', import.meta.url));
const APP_TEMPLATE_FILE = fileURLToPath(new URL('./templates/app.mustache', import.meta.url));

/** The session cookie's name. */
const SESSION_COOKIE = 'sid';
/** A session unused this long may be dropped (the contract's floor: never sooner). */
export const SESSION_IDLE_MS = 10 * 60 * 1000;
/** How often idle sessions are looked for. */
const SWEEP_MS = 60 * 1000;

const ITEMS_PER_PAGE = 50;
const MAX_PAGE = 100000;
const LABELS = [
  "Tom & Jerry's cheese board",
  '<b>bold</b> move of the week',
  '"Quoted" goods, boxed',
  "O'Brien's pick for winter",
  'a < b > c, the ordered set',
];

/**
 * The template and the two files it inserts, read once at start-up. The
 * template is parsed here so that mustache's cache holds it from the start.
 */
export function loadApp(dir = DEFAULT_APP_DIR) {
  const template = readFileSync(APP_TEMPLATE_FILE, 'utf8');
  Mustache.parse(template);
  return {
    template,
    css: readFileSync(path.join(dir, 'app.css'), 'utf8'),
    js: readFileSync(path.join(dir, 'app.js'), 'utf8'),
  };
}

/** `page=K` of /app (a URLSearchParams): K from 1 to 100,000, or null for a 400. */
export function parsePage(params) {
  const raw = params.get('page');
  if (raw === null || !/^[0-9]+$/.test(raw)) return null;
  const k = Number(raw);
  return k >= 1 && k <= MAX_PAGE ? k : null;
}

/** The session id the Cookie header names, or null. */
export function sessionId(header) {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Cents as `<cents / 100>.<two digits>`, in integers (no float rounding). */
export function formatCents(cents) {
  return `${(cents - (cents % 100)) / 100}.${String(cents % 100).padStart(2, '0')}`;
}

/** The 50 item rows of page K, from the contract's formula. */
export function pageItems(k) {
  const items = [];
  for (let i = 1; i <= ITEMS_PER_PAGE; i++) {
    const quantity = ((k * 7 + i * 13) % 100) + 1;
    const cents = (k * 7919 + i * 104729) % 100000;
    items.push({
      number: (k - 1) * ITEMS_PER_PAGE + i,
      label: `${LABELS[(k + i) % LABELS.length]}, no. ${k}.${i}`,
      quantity,
      price: formatCents(cents),
      total: formatCents(quantity * cents),
    });
  }
  return items;
}

/** The page for K and a session, rendered by mustache (which escapes the labels). */
export function renderApp(app, k, session) {
  return Mustache.render(app.template, {
    page: k,
    css: app.css,
    js: app.js,
    visits: session.visits,
    since: session.since,
    items: pageItems(k),
  });
}

/**
 * Sessions in memory: id -> { visits, since, seen }. No lock: the JavaScript
 * thread is the only one, and a request reads, counts and renders its
 * session with no await in between, so two requests never interleave there.
 */
export class SessionStore {
  constructor() {
    this.sessions = new Map();
  }

  /**
   * The live session `id` names, or a new one under a fresh id (128 bits
   * from node:crypto), never the one asked for: `{ id, session, created }`.
   */
  open(id, now = Date.now()) {
    let session = id === null ? undefined : this.sessions.get(id);
    if (session !== undefined) {
      session.seen = now;
      return { id, session, created: false };
    }
    let fresh;
    do fresh = randomBytes(16).toString('hex');
    while (fresh === id || this.sessions.has(fresh));
    session = { visits: 0, since: now, seen: now };
    this.sessions.set(fresh, session);
    return { id: fresh, session, created: true };
  }

  drop(id) {
    if (id !== null) this.sessions.delete(id);
  }

  /** Drops the sessions idle for longer than SESSION_IDLE_MS. */
  sweep(now = Date.now()) {
    for (const [id, session] of this.sessions) {
      if (now - session.seen > SESSION_IDLE_MS) this.sessions.delete(id);
    }
  }
}

function appPage(req, res, app, store, params) {
  const k = parsePage(params);
  if (k === null) {
    // Before the session is looked at: a bad page leaves sessions untouched.
    send(res, 400, 'text/plain', 'bad request: page must be an integer from 1 to 100000');
    return;
  }
  const { id, session, created } = store.open(sessionId(req.headers.cookie));
  session.visits += 1;
  const page = renderApp(app, k, session);
  // The count and the page are done; what follows may wait (gzip runs on
  // libuv's thread pool) without another request seeing a stale count.
  const headers = {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    Vary: 'Accept-Encoding',
  };
  if (created) headers['Set-Cookie'] = `${SESSION_COOKIE}=${id}; Path=/; HttpOnly`;
  const writePlain = () => {
    res.writeHead(200, { ...headers, 'Content-Length': Buffer.byteLength(page) });
    res.end(page);
  };
  // gzip only: the contract's app asks for gzip, not brotli.
  if (chooseEncoding(req.headers['accept-encoding']) !== 'gzip') {
    writePlain();
    return;
  }
  zlib.gzip(page, (err, out) => {
    if (err) {
      console.error('server: compression:', err.message);
      writePlain();
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Encoding': 'gzip', 'Content-Length': out.length });
    res.end(out);
  });
}

function appLogout(req, res, store) {
  store.drop(sessionId(req.headers.cookie));
  res.setHeader('Set-Cookie', `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly`);
  send(res, 200, 'text/plain', 'logged out');
}

function notFound(req, res) {
  send(res, 404, 'text/plain', 'not found');
}

function methodNotAllowed(req, res, allow) {
  res.setHeader('Allow', allow);
  send(res, 405, 'text/plain', 'method not allowed');
}

/**
 * The request handling every HTTP listener shares (one session store, one
 * Pool): `request(req, res)` for node:http's and node:http2's compatibility
 * 'request' event, `upgrade(req, socket, head)` for the HTTP/1.1 listeners'
 * WebSocket upgrades, `close()` to stop the session sweeper. `root` is the
 * optional first argument: '0' makes "/" answer as /blank, '1' as /work,
 * undefined leaves "/" unknown. `pool` is node-postgres' Pool for /db, or
 * null for none. `staticDir` is the folder served at /static/. `appDir`
 * holds the contract's app.css and app.js, read here.
 */
export function createHandler(root, { pool = null, staticDir = DEFAULT_STATIC_DIR, appDir = DEFAULT_APP_DIR } = {}) {
  const rootHandler = root === '0' ? blank : root === '1' ? work : null;
  const app = loadApp(appDir);
  const sessions = new SessionStore();
  const sweeper = setInterval(() => sessions.sweep(), SWEEP_MS);
  sweeper.unref();

  const request = (req, res) => {
    const url = req.url;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const get = req.method === 'GET' || req.method === 'HEAD';

    if (path === '/blank') {
      if (get) blank(req, res);
      else methodNotAllowed(req, res, 'GET, HEAD');
    } else if (path === '/work') {
      if (req.method === 'POST') work(req, res);
      else methodNotAllowed(req, res, 'POST');
    } else if (path.startsWith('/echo/')) {
      if (get) echo(req, res, path);
      else methodNotAllowed(req, res, 'GET, HEAD');
    } else if (path === '/db' || path === '/db/list') {
      if (!get) methodNotAllowed(req, res, 'GET, HEAD');
      else if (path === '/db') dbRow(req, res, pool, new URLSearchParams(url.slice(path.length)));
      else dbList(req, res, pool, new URLSearchParams(url.slice(path.length)));
    } else if (path === '/queries' || path === '/updates') {
      if (get) world(req, res, pool, new URLSearchParams(url.slice(path.length)), path === '/updates');
      else methodNotAllowed(req, res, 'GET, HEAD');
    } else if (path === '/fortunes') {
      if (get) fortunes(req, res, pool);
      else methodNotAllowed(req, res, 'GET, HEAD');
    } else if (path.startsWith('/static/')) {
      if (get) serveStatic(req, res, staticDir, path.slice('/static/'.length));
      else methodNotAllowed(req, res, 'GET, HEAD');
    } else if (path === '/upload') {
      if (req.method === 'POST') upload(req, res);
      else methodNotAllowed(req, res, 'POST');
    } else if (path === '/app') {
      if (get) appPage(req, res, app, sessions, new URLSearchParams(url.slice(path.length)));
      else methodNotAllowed(req, res, 'GET, HEAD');
    } else if (path === '/app/logout') {
      if (req.method === 'POST') appLogout(req, res, sessions);
      else methodNotAllowed(req, res, 'POST');
    } else if (path === '/ws') {
      // No WebSocket over HTTP/2 (ws has no RFC 8441 CONNECT), where Upgrade
      // is no header at all.
      if (req.httpVersionMajor < 2) res.setHeader('Upgrade', 'websocket');
      send(res, 426, 'text/plain', 'upgrade required');
    } else if (path === '/' && rootHandler !== null) {
      if (rootHandler === work ? req.method === 'POST' : get) rootHandler(req, res);
      else methodNotAllowed(req, res, rootHandler === work ? 'POST' : 'GET, HEAD');
    } else {
      notFound(req, res);
    }
  };

  // No compression: the contract's client offers none, and a WebSocket
  // server that negotiated it would be measured doing other work.
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const upgrade = (req, socket, head) => {
    const q = req.url.indexOf('?');
    if ((q === -1 ? req.url : req.url.slice(0, q)) === '/ws') {
      wss.handleUpgrade(req, socket, head, echoMessages);
      return;
    }
    // node:http hands every upgrade request here, whatever its path; the
    // socket is ours now, with no error listener of node:http's.
    socket.on('error', () => {});
    socket.end(
      'HTTP/1.1 404 Not Found\r\n' +
        `Date: ${new Date().toUTCString()}\r\n` +
        'Content-Type: text/plain\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found',
    );
  };
  return { request, upgrade, close: () => clearInterval(sweeper) };
}

/**
 * Attaches a handler to a server. A handler made here for this server alone
 * stops with it; a shared one is the caller's to close.
 */
function attach(server, root, options) {
  const own = options.handler === undefined;
  const handler = own ? createHandler(root, options) : options.handler;
  server.on('request', handler.request);
  server.on('upgrade', handler.upgrade);
  if (own) server.on('close', handler.close);
  return server;
}

/**
 * The cleartext HTTP/1.1 server (not yet listening), for PORT. `options` as
 * createHandler's, or `handler`: one made by createHandler to share.
 */
export function createServer(root, options = {}) {
  return attach(http.createServer(), root, options);
}

/**
 * The TLS server (not yet listening), for TLS_PORT: node:http2's secure
 * server offers ALPN h2 and http/1.1 and, with allowHTTP1, hands HTTP/1.1
 * connections (ALPN http/1.1 or none) to node:http's own connection handling,
 * so one listener serves both. `cert` and `key` are PEM; node:tls's defaults
 * otherwise (TLS 1.2 and 1.3).
 */
export function createSecureServer(root, { cert, key, ...options }) {
  return attach(http2.createSecureServer({ cert, key, allowHTTP1: true }), root, options);
}

/** The HTTP/2 cleartext server (not yet listening), for H2C_PORT: prior knowledge only. */
export function createH2cServer(root, options = {}) {
  return attach(http2.createServer(), root, options);
}

// -- grpc (contract 1.5) -------------------------------------------------------

/** The contract's service definition (the server runs in its own folder). */
export const WORK_PROTO = fileURLToPath(new URL('../../contract/grpc/work.proto', import.meta.url));

/**
 * netbench.Work's service definition, loaded from the .proto by
 * @grpc/proto-loader. Field names become camelCase (request_id is requestId),
 * so a message is the /work JSON document field for field. `defaults: true`
 * because proto3 puts no field at its default value on the wire: without it
 * an empty string or `default: false` would arrive as a missing field.
 * An unset `group` still arrives as null.
 */
export function loadWorkService(file = WORK_PROTO) {
  const definition = protoLoader.loadSync(file, { defaults: true });
  return grpc.loadPackageDefinition(definition).netbench.Work.service;
}

/** Compute: /work's computation; what /work answers 400 is INVALID_ARGUMENT. */
function computeCall(call, callback) {
  const answer = compute(call.request);
  if (answer === null) {
    callback({ code: grpc.status.INVALID_ARGUMENT, details: 'invalid work request' });
  } else {
    callback(null, answer);
  }
}

/** A @grpc/grpc-js server with netbench.Work (not yet bound), its default options. */
export function createGrpcServer(service = loadWorkService()) {
  const server = new grpc.Server();
  server.addService(service, { Compute: computeCall });
  return server;
}

/** `host:port` with an IPv6 address in brackets, as grpc-js's bindAsync wants it. */
export function hostPort(host, port) {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A port from the environment: an integer from 0 to 65535. Throws on anything else. */
export function parsePort(name, value) {
  const n = parseInt32(value);
  if (n === null || n < 0 || n > 65535) throw new Error(`${name}=${JSON.stringify(value)}: not a port`);
  return n;
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

function bindGrpc(server, port, host) {
  return new Promise((resolve, reject) => {
    server.bindAsync(hostPort(host, port), grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(server),
    );
  });
}

async function main() {
  const root = process.argv[2];
  if (root !== undefined && root !== '0' && root !== '1') {
    console.error(`server: unknown argument ${JSON.stringify(root)} (expected 0 or 1)`);
    process.exit(1);
  }
  const env = process.env;
  const host = env.HOST || '127.0.0.1';

  let pool;
  let ports;
  let tls = null;
  let grpcService = null;
  try {
    ports = {
      port: parsePort('PORT', env.PORT || '1234'),
      tls: env.TLS_PORT ? parsePort('TLS_PORT', env.TLS_PORT) : null,
      h2c: env.H2C_PORT ? parsePort('H2C_PORT', env.H2C_PORT) : null,
      grpc: env.GRPC_PORT ? parsePort('GRPC_PORT', env.GRPC_PORT) : null,
    };
    if (ports.tls !== null) {
      if (!env.TLS_CERT || !env.TLS_KEY) throw new Error('TLS_PORT needs TLS_CERT and TLS_KEY');
      tls = { cert: readFileSync(env.TLS_CERT), key: readFileSync(env.TLS_KEY) };
    }
    if (ports.grpc !== null) grpcService = loadWorkService();
    pool = createPool(env);
  } catch (err) {
    console.error('server:', err.message);
    process.exit(1);
  }

  const staticDir = env.STATIC_DIR || DEFAULT_STATIC_DIR;
  fs.stat(staticDir).catch((err) => console.error(`server: no static files, /static/ answers 404: ${err.message}`));

  const handler = createHandler(root, { pool, staticDir });
  const servers = [];
  const grpcServer = grpcService === null ? null : createGrpcServer(grpcService);
  try {
    // PORT last: once it accepts, every other listener does too.
    if (ports.tls !== null) servers.push(await listen(createSecureServer(root, { ...tls, handler }), ports.tls, host));
    if (ports.h2c !== null) servers.push(await listen(createH2cServer(root, { handler }), ports.h2c, host));
    if (grpcServer !== null) await bindGrpc(grpcServer, ports.grpc, host);
    servers.push(await listen(createServer(root, { handler }), ports.port, host));
  } catch (err) {
    console.error('server:', err.message);
    process.exit(1);
  }
  for (const server of servers) {
    server.on('error', (err) => {
      console.error('server:', err.message);
      process.exit(1);
    });
  }

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    let open = servers.length;
    for (const server of servers) {
      server.close(() => {
        open -= 1;
        if (open === 0) process.exit(0);
      });
    }
    grpcServer?.forceShutdown();
    handler.close();
    pool?.end().catch(() => {});
    // Connections that are mid-request get a short grace period.
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main();
}
