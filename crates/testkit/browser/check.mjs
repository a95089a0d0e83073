// Opens a netbench HTML report (or comparison) in headless Chromium and
// checks it the way a reader would see it: no console errors or warnings,
// no page errors, no network request of any kind (the file must work
// offline), every chart drawn with data and with paint on its canvas. On a
// run's report (one with a servers table) it also checks the colours: a key
// names each model with its colour, every series of a per-server chart is
// its server's colour, which is a shade of its model's hue (grey for an
// unknown model), and series come ordered by model, then name. On a run's
// report it checks the repetitions too: each ranked chart has one dataset
// of dots with one dot per good repetition of its bars (for raw throughput,
// of the report's repetitions), each in its server's colour and over its
// server's bar; and the summary's standings: a cell is bold only when it
// leads its test's column, a tied cell carries "=", every mark matches the
// report's data, and a column has one leader or else its tied cells. The scenario kinds' charts follow the
// same colour rules (a series per server); a sweep marks each knee its
// legend names with one triangle, and the idle memory lines name their
// memory per connection. And that every chart is readable at the width
// given (issue 29): no legend of more than 10 entries (the models, at most
// 9, and unknown), each bar of a ranked chart at least 10 px tall with its
// server's name as an axis label, ranked best first with a tier one run of
// bars, every line of a report's curve chart named at its end (inside the
// canvas, no two names overlapping), and no horizontal scrolling of the
// page or of any table in it. The static site's pages
// (`netbench site`) are checked the same way: their charts drawn with data
// and paint, a timeline's change marks counted. Saves a full-page
// screenshot. Prints one JSON line with what it found; exits 1 when
// anything is wrong, 2 when it could not check at all.
//
// usage: node check.mjs REPORT.html SCREENSHOT.png [--width PX] [--max-height PX] [--section ID]
//        [--sections DIR]
// (--section: the screenshot is of that section of the page alone, e.g. allocators;
// --sections: also one screenshot per section, DIR/report-<id>.png, each cut at --max-height)
import { chromium } from 'playwright-core';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [file, shot, ...rest] = process.argv.slice(2);
if (!file || !shot) {
  console.error('usage: node check.mjs REPORT.html SCREENSHOT.png [--width PX] [--max-height PX] [--section ID]');
  process.exit(2);
}
const option = (name, otherwise) => {
  const i = rest.indexOf(name);
  return i >= 0 ? Number(rest[i + 1]) : otherwise;
};
const width = option('--width', 1280);
// The screenshot keeps the whole page unless told to stop at a height.
const maxHeight = option('--max-height', 0);
const sectionAt = rest.indexOf('--section');
const section = sectionAt >= 0 ? rest[sectionAt + 1] : null;
const sectionsAt = rest.indexOf('--sections');
const sectionsDir = sectionsAt >= 0 ? rest[sectionsAt + 1] : null;
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
    // marks: what a chart says it drew over its data (the site's timelines:
    // one dashed line per environment change), null when it says nothing.
    return { id: c.id, kind: c.dataset.chart, datasets: chart ? chart.data.datasets.length : 0,
      points: values.length, painted, marks: c.dataset.marks === undefined ? null : Number(c.dataset.marks) };
  }));
  for (const c of charts) {
    if (c.datasets === 0 || c.points === 0) problems.push(`chart ${c.id} has no data`);
    if (c.painted < 1000) problems.push(`chart ${c.id} is blank (${c.painted} painted pixels)`);
  }
  if (charts.length === 0) problems.push('no charts in the page');
  const tables = await page.evaluate(() => document.querySelectorAll('table').length);
  const colours = await page.evaluate(() => ({
    keys: document.querySelectorAll('[data-model-key]').length,
    key: [...(document.querySelector('[data-model-key]') || document.createElement('div'))
      .querySelectorAll('[data-model]')]
      .map((e) => ({ model: e.dataset.model, color: e.dataset.color,
        servers: [...e.querySelectorAll('[data-key-server]')].map((x) => x.dataset.keyServer) })),
    servers: [...document.querySelectorAll('tr[data-server]')]
      .map((e) => ({ server: e.dataset.server, model: e.dataset.model, color: e.dataset.color })),
    series: [...document.querySelectorAll('canvas[data-chart]')].flatMap((c) => {
      const chart = window.Chart && window.Chart.getChart(c);
      // The repetitions' dots are one dataset coloured point by point, checked apart.
      // A ranked chart is one dataset whose bars are its servers, coloured bar by bar.
      return chart ? chart.data.datasets.filter((d) => !d.dots && !d.allocator).flatMap((d) => (d.ranked
        ? d.servers.map((server, j) => ({ chart: c.id, server, model: d.models[j], color: d.backgroundColor[j], ranked: true }))
        : [{ chart: c.id, server: d.server, model: d.model, color: d.backgroundColor }])) : [];
    }),
    // The allocator study colours by allocator, not by server: checked apart.
    allocatorSeries: [...document.querySelectorAll('canvas[data-chart="allocators"]')].map((c) => {
      const chart = window.Chart && window.Chart.getChart(c);
      return { chart: c.id, series: chart ? chart.data.datasets.map((d) => ({ allocator: d.allocator, color: d.backgroundColor })) : [] };
    }),
  }));
  for (const { chart, series } of colours.allocatorSeries) {
    if (series.length < 2) problems.push(`chart ${chart}: ${series.length} allocators, a study needs two or more`);
    if (new Set(series.map((s) => s.color)).size !== series.length) problems.push(`chart ${chart}: two allocators share a colour`);
    for (const s of series) {
      if (!['glibc', 'jemalloc', 'mimalloc', 'tcmalloc'].includes(s.allocator)) problems.push(`chart ${chart}: unknown allocator ${s.allocator}`);
    }
  }
  const models = colourProblems(colours, problems);
  const dots = await page.evaluate(() => {
    const data = JSON.parse(document.getElementById('report-data').textContent);
    const colorsElement = document.getElementById('report-colors');
    const rankedElement = document.getElementById('report-ranked');
    if (!colorsElement || !rankedElement || !data.repetitions) return [];
    const COLORS = JSON.parse(colorsElement.textContent);
    const RANKED = JSON.parse(rankedElement.textContent);
    const cellOf = (r) => data.cells.find((c) => c.test === r.test && c.connections === r.connections
      && c.server === r.server);
    return [...document.querySelectorAll('canvas[data-chart="ranked"]')].map((canvas) => {
      const spec = RANKED[Number(canvas.dataset.index)];
      // Raw throughput: the report's good repetitions of the cells that
      // have a bar; anything else: the repetitions the bars carry.
      const expected = spec.measure === 'throughput' && !spec.normalised
        ? data.repetitions.filter((r) => r.test === spec.test && r.connections === spec.connections
          && r.ok && r.result && (cellOf(r) || {}).rps).length
        : spec.bars.reduce((sum, b) => sum + b.repetitions.filter((v) => !spec.log || v > 0).length, 0);
      const chart = window.Chart && window.Chart.getChart(canvas);
      const sets = chart ? chart.data.datasets.map((d, i) => ({ d, i })).filter(({ d }) => d.dots) : [];
      const found = { chart: canvas.id, measure: spec.measure, datasets: sets.length, expected,
        points: 0, drawn: 0, wrongColour: [], offBar: [] };
      if (sets.length !== 1) return found;
      const { d, i } = sets[0];
      const meta = chart.getDatasetMeta(i);
      const bars = chart.getDatasetMeta(chart.data.datasets.findIndex((x) => x.ranked)).data;
      found.points = d.data.length;
      found.drawn = meta.data.filter((el) => el && Number.isFinite(el.x) && Number.isFinite(el.y)
        && el.y >= chart.chartArea.top && el.y <= chart.chartArea.bottom).length;
      d.data.forEach((p, j) => {
        const colour = Array.isArray(d.pointBackgroundColor) ? d.pointBackgroundColor[j] : d.pointBackgroundColor;
        if (colour !== COLORS[p.server]) found.wrongColour.push(`${p.server}: ${colour}`);
        const bar = bars[spec.bars.findIndex((b) => b.server === p.server)];
        const el = meta.data[j];
        if (!bar || !el || Math.abs(el.y - bar.y) > bar.height / 2) {
          found.offBar.push(`${p.server}: dot at ${el && el.y}, bar at ${bar && bar.y}`);
        }
      });
      return found;
    });
  });
  for (const d of dots) {
    if (d.datasets !== 1) problems.push(`chart ${d.chart}: ${d.datasets} datasets of repetition dots, not 1`);
    if (d.points !== d.expected || d.drawn !== d.expected) {
      problems.push(`chart ${d.chart}: ${d.points} dots (${d.drawn} drawn), ${d.expected} good repetitions`);
    }
    for (const w of d.wrongColour) problems.push(`chart ${d.chart}: a dot of ${w} is not its server's colour`);
    for (const o of d.offBar) problems.push(`chart ${d.chart}: a dot is off its bar (${o})`);
  }
  // Readable at this width (issue 29): legends short, ranked bars tall
  // enough and named on their axis, best first, a tier one run of bars,
  // and a page that does not scroll sideways.
  const readable = await page.evaluate((CURVES) => {
    const rankedElement = document.getElementById('report-ranked');
    const RANKED = rankedElement ? JSON.parse(rankedElement.textContent) : [];
    const legends = [];
    const bars = [];
    for (const c of document.querySelectorAll('canvas[data-chart]')) {
      const chart = window.Chart && window.Chart.getChart(c);
      if (!chart) continue;
      if (chart.legend && chart.options.plugins.legend.display !== false) {
        legends.push({ chart: c.id, entries: (chart.legend.legendItems || []).length });
      }
      if (c.dataset.chart !== 'ranked') continue;
      const spec = RANKED[Number(c.dataset.index)];
      const meta = chart.getDatasetMeta(chart.data.datasets.findIndex((d) => d.ranked));
      const ticks = chart.scales.y.ticks.map((t, k) => chart.scales.y.getLabelForValue(t.value != null ? t.value : k));
      bars.push({ chart: c.id, measure: spec.measure, lower: !!spec.lower_first, servers: spec.bars.map((b) => b.server),
        values: spec.bars.map((b) => b.value), tiers: spec.bars.map((b) => b.tier),
        heights: meta.data.map((el) => el.height), ticks });
    }
    // A table that scrolls inside itself hides columns a reader never
    // finds (table.grid is a scrolling block so the page itself cannot).
    const scrollingTables = [...document.querySelectorAll('table')]
      .filter((t) => t.scrollWidth > t.clientWidth)
      .map((t) => ({ in: (t.closest('section[id]') || { id: '(page)' }).id, className: t.className,
        scrollWidth: t.scrollWidth, clientWidth: t.clientWidth }));
    // A report's curves (a line per server) name every visible line at its
    // end, the names inside the canvas and never on top of one another.
    const curves = [];
    for (const c of document.querySelectorAll(CURVES.map((k) => `canvas[data-chart="${k}"]`).join(','))) {
      const chart = window.Chart && window.Chart.getChart(c);
      if (!chart) continue;
      const lines = chart.data.datasets.filter((d, i) => chart.isDatasetVisible(i) && d.data.some((v) =>
        (v !== null && typeof v === 'object' ? v.y : v) != null)).map((d) => d.label);
      const labels = chart.$endLabels || [];
      const ys = labels.map((l) => l.y).sort((a, b) => a - b);
      const overlaps = ys.filter((y, k) => k > 0 && y - ys[k - 1] < 11).length;
      const outside = labels.filter((l) => l.x < 0 || l.x + l.width > chart.width + 0.5
        || l.y < 4 || l.y > chart.height - 4).map((l) => l.text);
      const unnamed = lines.filter((t) => !labels.some((l) => l.text === t));
      curves.push({ chart: c.id, lines: lines.length, labels: labels.length, overlaps, outside, unnamed });
    }
    return { legends, bars, curves, scrollingTables, scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth };
  }, ['latency', 'startup', 'idle-pss', 'sweep', 'curve-rps', 'curve-threads', 'curve-rss']);
  for (const l of readable.legends) {
    if (l.entries > 10) problems.push(`chart ${l.chart}: a legend of ${l.entries} entries (at most 10: the models)`);
  }
  for (const b of readable.bars) {
    const thin = b.heights.filter((h) => !(h >= 10));
    if (thin.length) problems.push(`chart ${b.chart}: ${thin.length} bars under 10 px tall (${thin.slice(0, 3).join(', ')})`);
    if (b.ticks.length !== b.servers.length) problems.push(`chart ${b.chart}: ${b.ticks.length} axis labels for ${b.servers.length} bars`);
    b.servers.forEach((s, k) => {
      if (typeof b.ticks[k] !== 'string' || !b.ticks[k].startsWith(s)) problems.push(`chart ${b.chart}: bar ${k} is ${s}, its axis label "${b.ticks[k]}"`);
    });
    const lower = b.lower;
    const tiered = b.tiers.map((t, k) => ({ t, v: b.values[k] })).filter((x) => x.t != null);
    for (let k = 1; k < b.values.length; k += 1) {
      const sameTier = b.tiers[k] != null && b.tiers[k] === b.tiers[k - 1];
      const inOrder = lower ? b.values[k - 1] <= b.values[k] : b.values[k - 1] >= b.values[k];
      // Throughput is ranked by tier first: order by value holds within one.
      if (!inOrder && (b.measure !== 'throughput' || sameTier)) problems.push(`chart ${b.chart}: ${b.servers[k - 1]} before ${b.servers[k]}, not best first`);
    }
    for (let k = 1; k < tiered.length; k += 1) {
      if (tiered[k].t < tiered[k - 1].t) problems.push(`chart ${b.chart}: tier T${tiered[k].t} after T${tiered[k - 1].t}`);
    }
  }
  for (const c of readable.curves) {
    if (c.unnamed.length || c.labels !== c.lines) {
      problems.push(`chart ${c.chart}: ${c.lines} lines, ${c.labels} named at their end (unnamed: ${c.unnamed.slice(0, 3).join(', ')})`);
    }
    if (c.overlaps) problems.push(`chart ${c.chart}: ${c.overlaps} line names overlap another`);
    if (c.outside.length) problems.push(`chart ${c.chart}: names outside the canvas: ${c.outside.slice(0, 3).join(', ')}`);
  }
  for (const t of readable.scrollingTables) {
    problems.push(`a table in #${t.in} (${t.className}) scrolls sideways: ${t.scrollWidth} px in ${t.clientWidth} px`);
  }
  if (readable.scrollWidth > readable.innerWidth) {
    problems.push(`the page is ${readable.scrollWidth} px wide in a ${readable.innerWidth} px window`);
  }
  // The kinds' charts say in their legend what a line is worth: a sweep's
  // knee is one triangle on a line whose label gives it (none without), and
  // an idle memory line's label gives its memory per connection.
  const kindLabels = await page.evaluate(() => [...document.querySelectorAll(
    'canvas[data-chart="sweep"], canvas[data-chart="idle-pss"]')].flatMap((c) => {
    const chart = window.Chart && window.Chart.getChart(c);
    return chart ? chart.data.datasets.map((d) => ({ chart: c.id, kind: c.dataset.chart, label: d.label,
      triangles: Array.isArray(d.pointStyle) ? d.pointStyle.filter((p) => p === 'triangle').length : 0 })) : [];
  }));
  for (const k of kindLabels) {
    if (k.kind === 'sweep' && k.triangles !== (/\(knee [0-9,]+\/s\)$/.test(k.label) ? 1 : 0)) {
      problems.push(`chart ${k.chart}: ${k.triangles} knee marks on "${k.label}"`);
    }
    if (k.kind === 'idle-pss' && !/ (-?[0-9.]+ (B|KiB|MiB)\/conn|\(no fit\))$/.test(k.label)) {
      problems.push(`chart ${k.chart}: "${k.label}" does not give the memory per connection`);
    }
  }
  const standings = await page.evaluate(() => {
    const data = JSON.parse(document.getElementById('report-data').textContent);
    if (!data.cells || !document.querySelector('#summary')) return null;
    // The table is transposed (a server per row): a ranking is a column,
    // the cells of one test and connection count.
    const columns = new Map();
    for (const td of document.querySelectorAll('#summary tbody td[data-column]')) {
      const key = `${td.dataset.test} ${td.dataset.connections}`;
      if (!columns.has(key)) columns.set(key, []);
      columns.get(key).push(td);
    }
    const rows = [...columns.values()].map((tds) =>
      tds.map((td) => {
        const cell = data.cells.find((c) => c.test === td.dataset.test
          && c.connections === Number(td.dataset.connections) && c.server === td.dataset.column);
        const num = td.querySelector('.num');
        const mark = td.querySelector('abbr.standing');
        return { cell: `${td.dataset.column} ${td.dataset.test} c=${td.dataset.connections}`,
          shown: td.dataset.standing || null, data: cell ? cell.standing : undefined,
          measured: !!(cell && cell.rps),
          bold: !!num && Number(getComputedStyle(num).fontWeight) >= 600,
          mark: mark ? mark.textContent : '', title: mark ? mark.title : '' };
      }));
    // Nothing else in the summary table is bold either.
    const otherBold = [...document.querySelectorAll('#summary tbody td')].filter((td) =>
      td.dataset.standing !== 'leader' && [...td.querySelectorAll('*')].concat([td])
        .some((e) => Number(getComputedStyle(e).fontWeight) >= 600 && !e.matches('abbr')
          && e.textContent.trim() !== '')).length;
    return { rows, otherBold };
  });
  const count = { leader: 0, tied: 0, behind: 0 };
  if (standings) {
    if (standings.otherBold > 0) problems.push(`${standings.otherBold} summary cells not leading their row are bold`);
    for (const row of standings.rows) {
      for (const c of row) {
        if (c.measured && c.shown !== c.data) problems.push(`${c.cell}: shown ${c.shown}, the data says ${c.data}`);
        if (!c.measured) continue;
        count[c.shown] = (count[c.shown] || 0) + 1;
        if (c.bold !== (c.shown === 'leader')) problems.push(`${c.cell}: bold ${c.bold}, standing ${c.shown}`);
        const mark = { leader: '▲', tied: '=', behind: '' }[c.shown];
        if (c.mark !== mark) problems.push(`${c.cell}: mark "${c.mark}", standing ${c.shown}`);
        if (c.shown === 'tied' && !/cannot be told apart from the top/.test(c.title)) {
          problems.push(`${c.cell}: the tied mark's title does not say what it means: ${c.title}`);
        }
      }
      const leaders = row.filter((c) => c.measured && c.shown === 'leader').length;
      const tied = row.filter((c) => c.measured && c.shown === 'tied').length;
      const measured = row.filter((c) => c.measured).length;
      if (leaders > 1 || (leaders === 1 && tied > 0) || (measured > 0 && leaders + tied === 0)) {
        problems.push(`a row with ${leaders} leaders and ${tied} tied of ${measured}: ${JSON.stringify(row)}`);
      }
    }
  }
  if (section) {
    const element = await page.$(`section#${section}`);
    if (!element) problems.push(`no section #${section} to picture`);
    else {
      // The section's top, down to --max-height when given (its charts
      // without the long table under them).
      const box = await element.boundingBox();
      const height = maxHeight > 0 ? Math.min(box.height, maxHeight) : box.height;
      await page.screenshot({ path: shot, fullPage: true,
        clip: { x: box.x, y: box.y, width: box.width, height } });
    }
  } else if (maxHeight > 0) {
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.screenshot({ path: shot, fullPage: true,
      clip: { x: 0, y: 0, width, height: Math.min(height, maxHeight) } });
  } else {
    await page.screenshot({ path: shot, fullPage: true });
  }
  if (sectionsDir) {
    for (const id of await page.evaluate(() => [...document.querySelectorAll('section[id]')].map((e) => e.id))) {
      const box = await (await page.$(`section#${id}`)).boundingBox();
      const height = maxHeight > 0 ? Math.min(box.height, maxHeight) : box.height;
      await page.screenshot({ path: `${sectionsDir}/report-${id}.png`, fullPage: true,
        clip: { x: box.x, y: box.y, width: box.width, height } });
    }
  }
  console.log(JSON.stringify({ ok: problems.length === 0, charts, tables, models, kindLabels,
    series: colours.series.length, dots, standings: count, readable, problems }));
} finally {
  await browser.close();
}
process.exit(problems.length === 0 ? 0 : 1);

// Hue (degrees) and saturation (0..1) of "#rrggbb"; null for anything else.
function hueSat(hex) {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex || '');
  if (!m) return null;
  const [r, g, b] = m.slice(1).map((x) => parseInt(x, 16) / 255);
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const d = max - min;
  if (d === 0) return { h: 0, s: 0 };
  const l = (max + min) / 2;
  const s = d / (1 - Math.abs(2 * l - 1));
  let h;
  if (max === r) h = 60 * ((((g - b) / d) % 6 + 6) % 6);
  else if (max === g) h = 60 * ((b - r) / d + 2);
  else h = 60 * ((r - g) / d + 4);
  return { h, s };
}

// (Declarations, not constants: the checks above call them before this
// line runs.)
function apart(a, b) {
  const d = Math.abs(a - b) % 360;
  return Math.min(d, 360 - d);
}

// One family: the same hue within a few degrees, or both grey.
function sameFamily(a, b) {
  const grey = (x) => x.s < 0.05;
  return grey(a) || grey(b) ? grey(a) && grey(b) : apart(a.h, b.h) <= 8;
}

// Checks the page's colours (see the top); returns the key as
// [{ model, color, servers }] for the caller to assert on.
function colourProblems({ keys, key, servers, series }, problems) {
  if (servers.length === 0) return []; // a comparison: one series, coloured by verdict
  if (keys === 0) problems.push('no model key ([data-model-key]) in the page');
  const keyOf = new Map(key.map((k) => [k.model, k]));
  const serverOf = new Map(servers.map((s) => [s.server, s]));
  for (const [i, a] of key.entries()) {
    const ha = hueSat(a.color);
    if (!ha) { problems.push(`model ${a.model}'s key colour ${a.color} is not #rrggbb`); continue; }
    for (const b of key.slice(i + 1)) {
      const hb = hueSat(b.color);
      if (hb && sameFamily(ha, hb)) problems.push(`models ${a.model} and ${b.model} share a hue (${a.color}, ${b.color})`);
    }
  }
  const rank = (s) => [key.findIndex((k) => k.model === s.model), s.server];
  const byChart = new Map();
  for (const s of series) {
    const where = `chart ${s.chart}, series ${s.server}`;
    const server = serverOf.get(s.server);
    if (!server) { problems.push(`${where}: no such server in the servers table`); continue; }
    if (s.model !== server.model) problems.push(`${where}: model ${s.model}, the table says ${server.model}`);
    if (s.color !== server.color) problems.push(`${where}: colour ${s.color}, the table says ${server.color}`);
    const k = keyOf.get(server.model);
    if (!k) { problems.push(`${where}: model ${server.model} is not in the key`); continue; }
    if (!k.servers.includes(s.server)) problems.push(`${where}: the key does not list it under ${server.model}`);
    const hs = hueSat(s.color);
    const hk = hueSat(k.color);
    if (!hs || !hk || !sameFamily(hs, hk)) problems.push(`${where}: colour ${s.color} is not of ${server.model}'s family (${k.color})`);
    if (!byChart.has(s.chart)) byChart.set(s.chart, []);
    byChart.get(s.chart).push({ ...s, model: server.model });
  }
  for (const [chart, list] of byChart) {
    const order = list.map(rank);
    // A ranked chart's bars come best first (checked with the readability).
    if (list.some((s) => s.ranked)) order.length = 0;
    for (let i = 1; i < order.length; i += 1) {
      const [a, b] = [order[i - 1], order[i]];
      if (a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1])) {
        problems.push(`chart ${chart}: series ${list[i - 1].server} before ${list[i].server}, not by model then name`);
      }
    }
    const colours = new Set(list.map((s) => s.color));
    if (colours.size !== list.length) problems.push(`chart ${chart}: two series share a colour`);
  }
  return key;
}
