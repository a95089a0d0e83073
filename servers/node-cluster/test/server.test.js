import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { createServer } from '../server.js';

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
async function start(root) {
  const server = createServer(root);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
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
    headers: { 'content-type': 'application/json; charset=utf-8' },
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

/** A TCP port that was free a moment ago. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Child process ids of `pid`, from /proc (Linux). */
function childrenOf(pid) {
  const ids = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    if (text) ids.push(...text.split(/\s+/).map(Number));
  }
  return ids;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what, ok, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await ok()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the cluster, as run by netbench', () => {
  test('one worker per CPU, all serving, all gone after SIGTERM', async () => {
    const port = await freePort();
    const script = fileURLToPath(new URL('../server.js', import.meta.url));
    const primary = spawn(process.execPath, [script], {
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port) },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const exited = new Promise((resolve) => primary.on('exit', (code, signal) => resolve({ code, signal })));
    try {
      const url = `http://127.0.0.1:${port}`;
      await until('the server', async () => {
        try {
          return (await fetch(`${url}/blank`)).status === 200;
        } catch {
          return false;
        }
      });
      let workers = [];
      await until('the workers', () => (workers = childrenOf(primary.pid)).length === os.availableParallelism());
      // Several connections (fetch opens new ones as needed) all get answers.
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          post(`${url}/work`, JSON.stringify({ ...EXAMPLE, requestId: `r${i}` })),
        ),
      );
      answers.forEach((a, i) => {
        assert.equal(a.status, 200);
        assert.deepEqual(JSON.parse(a.body), { ...EXAMPLE_ANSWER, requestId: `r${i}` });
      });
      primary.kill('SIGTERM');
      assert.deepEqual(await exited, { code: 0, signal: null });
      await until('the workers to exit', () => workers.every((pid) => !alive(pid)));
    } finally {
      primary.kill('SIGKILL');
    }
  });
});
