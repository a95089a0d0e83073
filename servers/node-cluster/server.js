// netbench reference server: Node.js's node:http under node:cluster (no
// dependencies).
//
// Follows contract/CONTRACT.md: listens on HOST:PORT (defaults 127.0.0.1 and
// 1234), serves /blank, /work and /echo/<text>, exits on SIGTERM. An optional
// first argument "0" or "1" makes "/" answer as /blank or /work.
//
// The primary process forks one worker per CPU that this process may run on
// (os.availableParallelism(), which follows the CPU affinity mask) and serves
// nothing itself. Every worker runs the same node:http server as
// servers/node-http; with node:cluster's default scheduling policy on Linux
// (round-robin), the primary owns the listening socket, accepts connections
// and hands each one to a worker in turn over IPC. SIGTERM to the primary
// stops every worker, then the primary.

import cluster from 'node:cluster';
import http from 'node:http';
import os from 'node:os';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

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
  const chunks = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (chunk) => {
    if (tooLarge) return;
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      tooLarge = true;
      res.setHeader('Connection', 'close');
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
    send(res, 200, 'application/json', JSON.stringify(answer));
  });
  req.on('error', () => {
    // The client went away mid-body; there is no one to answer.
  });
}

function echo(req, res, path) {
  send(res, 200, 'text/plain', path.slice('/echo/'.length));
}

function notFound(req, res) {
  send(res, 404, 'text/plain', 'not found');
}

function methodNotAllowed(req, res, allow) {
  res.setHeader('Allow', allow);
  send(res, 405, 'text/plain', 'method not allowed');
}

/**
 * Creates the server (not yet listening). `root` is the optional first
 * argument: '0' makes "/" answer as /blank, '1' as /work, undefined leaves
 * "/" unknown.
 */
export function createServer(root) {
  const rootHandler = root === '0' ? blank : root === '1' ? work : null;

  return http.createServer((req, res) => {
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
    } else if (path === '/' && rootHandler !== null) {
      if (rootHandler === work ? req.method === 'POST' : get) rootHandler(req, res);
      else methodNotAllowed(req, res, rootHandler === work ? 'POST' : 'GET, HEAD');
    } else {
      notFound(req, res);
    }
  });
}

/** Grace period for connections that are mid-request when told to stop. */
const GRACE_MS = 2000;

function runWorker(root, host, port) {
  const server = createServer(root);
  server.on('error', (err) => {
    console.error(`server: worker ${process.pid}: ${err.message}`);
    process.exit(1);
  });
  server.listen(port, host);

  const stop = () => {
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), GRACE_MS).unref();
  };
  process.on('SIGTERM', stop);
  // Ctrl-C in a terminal reaches the whole process group; the primary
  // decides when the workers stop.
  process.on('SIGINT', () => {});
  // The primary is gone (even by SIGKILL): do not outlive it.
  process.on('disconnect', () => process.exit(0));
}

function runPrimary(count) {
  let stopping = false;
  let exitStatus = 0;
  const listening = new Set();

  const fork = () => {
    const worker = cluster.fork();
    worker.on('listening', () => listening.add(worker.id));
  };

  cluster.on('exit', (worker, code, signal) => {
    const wasListening = listening.delete(worker.id);
    if (stopping) {
      if (Object.keys(cluster.workers).length === 0) process.exit(exitStatus);
      return;
    }
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (!wasListening) {
      // It never got to serve (address in use, bad HOST): give up on all.
      console.error(`server: worker ${worker.process.pid} failed to start (${how})`);
      stop(1);
      return;
    }
    console.error(`server: worker ${worker.process.pid} exited (${how}); starting another`);
    fork();
  });

  const stop = (status = 0) => {
    if (stopping) return;
    stopping = true;
    exitStatus = status;
    const workers = Object.values(cluster.workers);
    if (workers.length === 0) process.exit(status);
    for (const worker of workers) worker.process.kill('SIGTERM');
    // Workers that do not stop in time are killed with the primary's exit.
    setTimeout(() => {
      for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGKILL');
      process.exit(status);
    }, GRACE_MS + 1000).unref();
  };
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));

  for (let i = 0; i < count; i++) fork();
}

function main() {
  const root = process.argv[2];
  if (root !== undefined && root !== '0' && root !== '1') {
    console.error(`server: unknown argument ${JSON.stringify(root)} (expected 0 or 1)`);
    process.exit(1);
  }
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT || '1234');

  if (cluster.isPrimary) {
    runPrimary(os.availableParallelism());
  } else {
    runWorker(root, host, port);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main();
}
