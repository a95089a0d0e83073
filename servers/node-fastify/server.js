// netbench reference server for Fastify (https://fastify.dev).
//
// Follows contract/CONTRACT.md: listens on HOST:PORT (defaults 127.0.0.1 and
// 1234), serves /blank, /work and /echo/<text>, exits on SIGTERM. An optional
// first argument "0" or "1" makes "/" answer as /blank or /work.
//
// Fastify's defaults throughout: logger off (the default), the built-in JSON
// body parser (secure-json-parse, 1 MiB body limit, 413 above it), router
// 404s, automatic HEAD routes. No schemas: Fastify's default Ajv settings
// coerce types ("1" would pass as a number), which the contract forbids, so
// the document is checked by hand as in servers/node-http.

import Fastify from 'fastify';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

/** The contract's timestamp format: YYYY-MM-DDTHH:MM:SS.sssZ. */
const DATE_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

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

function blank(request, reply) {
  reply.type('text/plain').send('OK');
}

function work(request, reply) {
  const answer = compute(request.body);
  if (answer === null) {
    reply.code(400).type('text/plain').send('bad request');
    return;
  }
  // No response schema: Fastify's default serializer is JSON.stringify.
  reply.send(answer);
}

function echo(request, reply) {
  reply.type('text/plain').send(request.params['*']);
}

/**
 * Builds the Fastify instance (not yet listening). `root` is the optional
 * first argument: '0' makes "/" answer as /blank, '1' as /work, undefined
 * leaves "/" unknown.
 */
export function build(root) {
  const app = Fastify({ logger: false });
  app.get('/blank', blank);
  app.post('/work', work);
  app.get('/echo/*', echo);
  if (root === '0') app.get('/', blank);
  if (root === '1') app.post('/', work);
  return app;
}

async function main() {
  const root = process.argv[2];
  if (root !== undefined && root !== '0' && root !== '1') {
    console.error(`server: unknown argument ${JSON.stringify(root)} (expected 0 or 1)`);
    process.exit(1);
  }
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT || '1234');

  const app = build(root);
  try {
    await app.listen({ host, port });
  } catch (err) {
    console.error('server:', err.message);
    process.exit(1);
  }

  const stop = () => {
    app.close().then(() => process.exit(0));
    // Connections that are mid-request get a short grace period.
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main();
}
