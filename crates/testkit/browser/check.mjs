// Opens a netbench HTML report (or comparison) in headless Chromium and
// checks it the way a reader would see it: no console errors or warnings,
// no page errors, no network request of any kind (the file must work
// offline), every chart drawn with data and with paint on its canvas. Saves a
// full-page screenshot. Prints one JSON line with what it found; exits 1 when
// anything is wrong, 2 when it could not check at all.
//
// usage: node check.mjs REPORT.html SCREENSHOT.png [--width PX] [--max-height PX]
import { chromium } from 'playwright-core';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [file, shot, ...rest] = process.argv.slice(2);
if (!file || !shot) {
  console.error('usage: node check.mjs REPORT.html SCREENSHOT.png [--width PX] [--max-height PX]');
  process.exit(2);
}
const option = (name, otherwise) => {
  const i = rest.indexOf(name);
  return i >= 0 ? Number(rest[i + 1]) : otherwise;
};
const width = option('--width', 1280);
// The screenshot keeps the whole page unless told to stop at a height.
const maxHeight = option('--max-height', 0);
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

// Without the background-networking flags Chromium reaches out to Google's
// services at start; a closed network answers with errors that are not the
// page's.
const browser = await chromium.launch({
  executablePath,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
}).catch((e) => {
  console.error(`could not start Chromium at ${executablePath}: ${e.message}\n` +
    'install it with `apt-get install chromium` (make test does), or set CHROMIUM');
  process.exit(2);
});

const problems = [];
try {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) problems.push(`network request: ${r.url()}`);
  });
  const url = pathToFileURL(resolve(file)).href;
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => document.body.dataset.charts !== undefined, null, { timeout: 15000 })
    .catch(() => problems.push('the charts were never drawn (body[data-charts] not set)'));
  const charts = await page.evaluate(() => [...document.querySelectorAll('canvas[data-chart]')].map((c) => {
    const chart = window.Chart && window.Chart.getChart(c);
    // A gap is null, or an object whose value is null (error bars).
    const present = (v) => v !== null && v !== undefined && !(typeof v === 'object' && v.y == null && v.x == null);
    const values = chart ? chart.data.datasets.flatMap((d) => d.data).filter(present) : [];
    // Painted pixels: a chart with data but nothing drawn is still broken.
    const ctx = c.getContext('2d');
    const px = ctx.getImageData(0, 0, c.width, c.height).data;
    let painted = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) painted += 1;
    return { id: c.id, kind: c.dataset.chart, datasets: chart ? chart.data.datasets.length : 0,
      points: values.length, painted };
  }));
  for (const c of charts) {
    if (c.datasets === 0 || c.points === 0) problems.push(`chart ${c.id} has no data`);
    if (c.painted < 1000) problems.push(`chart ${c.id} is blank (${c.painted} painted pixels)`);
  }
  if (charts.length === 0) problems.push('no charts in the page');
  const tables = await page.evaluate(() => document.querySelectorAll('table').length);
  if (maxHeight > 0) {
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.screenshot({ path: shot, fullPage: true,
      clip: { x: 0, y: 0, width, height: Math.min(height, maxHeight) } });
  } else {
    await page.screenshot({ path: shot, fullPage: true });
  }
  console.log(JSON.stringify({ ok: problems.length === 0, charts, tables, problems }));
} finally {
  await browser.close();
}
process.exit(problems.length === 0 ? 0 : 1);
