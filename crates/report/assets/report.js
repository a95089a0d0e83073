// Draws the report's charts with Chart.js from the JSON the page carries
// (#report-data, #report-flags for what each flag mark means,
// #report-colors for each server's colour: a shade of its threading model's
// hue, chosen by crates/report/src/palette.rs, #report-model-colors for each
// model's, and #report-ranked for the ranked charts, whose order, whiskers,
// tiers and marks crates/report/src/ranked_view.rs computed); the tables and
// the colour key are already in the page. A ranked chart is one dataset of
// bars (one per server, best first, names on the axis) and one of dots (a
// dot per repetition); every other per-server chart has a series per server
// in the report's column order (by model, then name), carrying its server
// and model, and past 8 servers a legend of models instead of servers; a
// line chart names every line at its end (endLabels). When
// every chart is drawn, body[data-charts] holds their number, for the
// browser test.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  Chart.register(ChartErrorBars.BarWithErrorBarsController, ChartErrorBars.BarWithErrorBar);
  // Still pictures: a report is read and printed, and screenshots must be whole.
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';

  // What each flag mark means, as the tables' hover text says it
  // (crates/report/src/flag.rs writes it into the page).
  const FLAG_TEXT = JSON.parse(document.getElementById('report-flags').textContent);
  const columns = data.columns || [];
  const colorsElement = document.getElementById('report-colors');
  const COLORS = colorsElement ? JSON.parse(colorsElement.textContent) : {};
  const color = (server) => COLORS[server] || '#808080';
  const modelOf = (server) => {
    const s = (data.servers || []).find((x) => x.label === server);
    return (s && s.model) || 'unknown';
  };
  const cellOf = (test, conns, server) => data.cells.find(
    (c) => c.test === test && c.connections === conns && c.server === server);
  const testOf = (name) => data.tests.find((t) => t.name === name);
  const num = (v) => Math.round(v).toLocaleString('en-US');
  const ms = (ns) => {
    const v = ns / 1e6;
    return v >= 100 ? v.toFixed(0) + ' ms' : v >= 1 ? v.toFixed(2) + ' ms' : (v * 1000).toFixed(1) + ' µs';
  };
  const flagLines = (flags) => (flags || '').split('').map((f) => f + ': ' + (FLAG_TEXT[f] || f));

  const GAP = { y: null, yMin: null, yMax: null };
  const DOT_BORDER = '#1d2330';

  // Each model's colour (crates/report/src/palette.rs), for legends that
  // name models instead of servers.
  const modelColorsElement = document.getElementById('report-model-colors');
  const MODEL_COLORS = modelColorsElement ? JSON.parse(modelColorsElement.textContent) : {};

  // A legend of more than 8 servers is a wall of names nobody matches to a
  // shade: past 8 a chart's legend names the threading models instead (the
  // series are shades of their model's hue), and clicking a model hides or
  // shows all of its servers. Hover a line or bar for its server.
  const MAX_SERVER_LEGEND = 8;
  function legendFor(datasets, position) {
    const servers = datasets.filter((d) => d.server && !d.dots);
    if (servers.length <= MAX_SERVER_LEGEND) {
      return { position: position || 'top', labels: { boxWidth: 10, font: { size: 11 } } };
    }
    return {
      position: 'top',
      labels: {
        boxWidth: 10,
        font: { size: 11 },
        generateLabels: (chart) => {
          const models = [];
          chart.data.datasets.forEach((d, i) => {
            if (!d.model || d.dots) return;
            let m = models.find((x) => x.model === d.model);
            if (!m) { m = { model: d.model, indexes: [] }; models.push(m); }
            m.indexes.push(i);
          });
          return models.map((m) => ({
            text: m.model + ' (' + m.indexes.length + ')',
            fillStyle: MODEL_COLORS[m.model] || '#808080',
            strokeStyle: MODEL_COLORS[m.model] || '#808080',
            lineWidth: 0,
            hidden: m.indexes.every((i) => !chart.isDatasetVisible(i)),
            model: m.model,
          }));
        },
      },
      onClick: (e, item, legend) => {
        const chart = legend.chart;
        const shown = chart.data.datasets.some((d, i) => d.model === item.model && chart.isDatasetVisible(i));
        chart.data.datasets.forEach((d, i) => { if (d.model === item.model) chart.setDatasetVisibility(i, !shown); });
        chart.update();
      },
    };
  }

  // The ranked charts (crates/report/src/ranked_view.rs computes their
  // order, whiskers, tiers, shares and marks): one horizontal bar per
  // server, best first, its name (and tier) on the axis, its figure, share
  // of the leader and marks written at the bar's end, a dot per repetition,
  // the tiers as alternating bands, and a legend of the models alone.
  const rankedElement = document.getElementById('report-ranked');
  const RANKED = rankedElement ? JSON.parse(rankedElement.textContent) : [];
  const short = (v) => (Math.abs(v) >= 100 ? num(v) : Math.abs(v) >= 10 ? v.toFixed(1)
    : v === 0 ? '0' : v.toPrecision(3));
  // Axis ticks: 50k, 1.2M, 0.25: short enough to stay level.
  const tick = (v) => {
    const a = Math.abs(v);
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + 'M';
    if (a >= 1e3) return +(v / 1e3).toPrecision(3) + 'k';
    return String(+Number(v).toPrecision(3));
  };
  // The next round number at or above v (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6,
  // 8 times a power of ten), for an axis that ends on a tick.
  const roundUp = (v) => {
    const p = 10 ** Math.floor(Math.log10(v));
    return [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].find((m) => m * p >= v * (1 - 1e-9)) * p;
  };
  // A log axis labels 1, 2 and 5 of each decade, no more.
  const logTick = (v) => {
    const lead = Math.round(v / 10 ** Math.floor(Math.log10(v)));
    return [1, 2, 5].includes(lead) ? tick(v) : '';
  };
  const figureOf = (spec, v) => (spec.figure === 'ms' ? ms(v * 1e6)
    : spec.figure === 'percent' ? (v * 100).toFixed(v >= 0.995 ? 0 : 1) + '%' : short(v));
  // Beside a bar: its share of the leader's figure (higher is better), or
  // its multiple of the lowest (lower is better: "×3.2" reads better than
  // "320%").
  const shareText = (spec, b) => {
    if (b.share == null || spec.bars.length < 2) return '';
    if (spec.lower_first) {
      return ' · ×' + (b.share >= 10 ? b.share.toFixed(0) : b.share.toFixed(1));
    }
    return ' · ' + Math.round(b.share * 100) + '%';
  };
  const barText = (spec, b) => figureOf(spec, b.value) + shareText(spec, b) + (b.rank ? ' · #' + b.rank.replace(/^#/, '') : '')
    + (b.flags ? '  ' + b.flags : '');
  const LABEL_FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';

  // The figure, share and marks of each bar in a column right of the plot,
  // level with the bar: a column reads like a table, and no whisker runs
  // through it.
  const barLabels = (spec) => ({
    id: 'barLabels',
    afterDatasetsDraw(chart) {
      const meta = chart.getDatasetMeta(0);
      const ctx = chart.ctx;
      const x = chart.chartArea.right + 8;
      ctx.save();
      ctx.font = LABEL_FONT;
      ctx.textBaseline = 'middle';
      meta.data.forEach((el, j) => {
        const b = spec.bars[j];
        const text = barText(spec, b);
        const plain = b.flags ? text.slice(0, -b.flags.length) : text;
        ctx.fillStyle = '#1d2330';
        ctx.fillText(plain, x, el.y);
        if (b.flags) {
          ctx.fillStyle = '#7a4d00';
          ctx.font = 'bold ' + LABEL_FONT;
          ctx.fillText(b.flags, x + ctx.measureText(plain).width, el.y);
          ctx.font = LABEL_FONT;
        }
      });
      ctx.restore();
    },
  });

  // Tiers as bands: the rows of every second tier shaded, so servers that
  // cannot be told apart read as one block.
  const tierBands = (spec) => ({
    id: 'tierBands',
    beforeDatasetsDraw(chart) {
      if (!spec.bars.some((b) => b.tier != null)) return;
      const y = chart.scales.y;
      const area = chart.chartArea;
      const step = spec.bars.length > 1 ? Math.abs(y.getPixelForValue(1) - y.getPixelForValue(0)) : area.bottom - area.top;
      const ctx = chart.ctx;
      ctx.save();
      spec.bars.forEach((b, j) => {
        if (b.tier == null || b.tier % 2 === 1) return;
        ctx.fillStyle = 'rgba(66, 105, 208, 0.08)';
        ctx.fillRect(area.left, y.getPixelForValue(j) - step / 2, area.right - area.left, step);
      });
      ctx.restore();
    },
  });

  // A dashed line across the bars at the chart's reference figure (100%,
  // no change, on a chart of shares of a server's own baseline), so a bar
  // reads at a glance as a cost or a gain.
  const referenceLine = (spec) => ({
    id: 'referenceLine',
    afterDatasetsDraw(chart) {
      if (spec.reference == null) return;
      const x = chart.scales.x.getPixelForValue(spec.reference);
      const area = chart.chartArea;
      if (!(x >= area.left && x <= area.right)) return;
      const ctx = chart.ctx;
      ctx.save();
      ctx.strokeStyle = '#5b6474';
      ctx.lineWidth = 1;
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      ctx.moveTo(x, area.top);
      ctx.lineTo(x, area.bottom);
      ctx.stroke();
      ctx.restore();
    },
  });

  function ranked(canvas) {
    const spec = RANKED[Number(canvas.dataset.index)];
    const bars = spec.bars;
    // Room on the right for the column of labels.
    const probe = document.createElement('canvas').getContext('2d');
    probe.font = 'bold ' + LABEL_FONT;
    const room = Math.ceil(Math.max(...bars.map((b) => probe.measureText(barText(spec, b)).width))) + 14;
    // Two or three repetitions give wide intervals: the axis stops at 1.3
    // times the largest bar and a longer whisker is cut at its end (the
    // tooltip gives both ends), so one wide interval does not shrink every
    // bar.
    // The reference line stays on the axis even when every bar is short of it.
    const top = Math.max(...bars.map((b) => b.value), spec.reference == null ? 0 : spec.reference);
    const reach = Math.max(...bars.map((b) => (b.high == null ? b.value : b.high)));
    const dots = {
      type: 'scatter',
      label: 'repetitions',
      dots: true,
      indexAxis: 'x',
      parsing: false,
      pointRadius: 3,
      pointHoverRadius: 5,
      pointBorderWidth: 1,
      pointBorderColor: DOT_BORDER,
      pointBackgroundColor: [],
      data: [],
    };
    bars.forEach((b, j) => {
      const n = b.repetitions.length;
      b.repetitions.forEach((v, k) => {
        if (!(spec.log && v <= 0)) {
          // Spread over the middle half of the bar, so equal values stay apart.
          const off = n > 1 ? (k / (n - 1) - 0.5) * 0.4 : 0;
          dots.data.push({ x: v, y: j + off, server: b.server, what: 'repetition ' + (k + 1) });
          dots.pointBackgroundColor.push(b.color);
        }
      });
    });
    // Unparsed data must come sorted along its index axis (x here).
    const order = dots.data.map((p, k) => k).sort((a, b) => dots.data[a].x - dots.data[b].x);
    dots.data = order.map((k) => dots.data[k]);
    dots.pointBackgroundColor = order.map((k) => dots.pointBackgroundColor[k]);
    const dataset = {
      label: spec.unit,
      ranked: true,
      servers: bars.map((b) => b.server),
      models: bars.map((b) => b.model),
      backgroundColor: bars.map((b) => b.color),
      data: bars.map((b) => ({ x: b.value, xMin: b.low == null ? b.value : b.low, xMax: b.high == null ? b.value : b.high })),
    };
    new Chart(canvas, {
      type: 'barWithErrorBars',
      data: { labels: bars.map((b) => b.server + (b.tier != null ? '  T' + b.tier : '')), datasets: [dataset, dots] },
      plugins: [tierBands(spec), referenceLine(spec), barLabels(spec)],
      options: {
        indexAxis: 'y',
        layout: { padding: { right: room } },
        scales: {
          x: spec.log
            ? { type: 'logarithmic', title: { display: true, text: spec.unit }, ticks: { callback: (v) => logTick(v), maxRotation: 0 } }
            : { beginAtZero: true, max: reach > top * 1.3 ? roundUp(top * 1.3) : undefined,
              suggestedMax: spec.reference == null ? undefined : spec.reference,
              title: { display: true, text: spec.unit },
              // A chart of shares reads in percent on its axis as beside its bars.
              ticks: { callback: (v) => (spec.figure === 'percent' ? Math.round(v * 100) + '%' : tick(v)), maxRotation: 0 } },
          y: { ticks: { autoSkip: false, font: { size: 11 } }, grid: { display: false } },
        },
        plugins: {
          legend: {
            labels: {
              boxWidth: 8,
              padding: 6,
              font: { size: 10 },
              generateLabels: () => spec.models.map((m) => ({
                text: m.model, fillStyle: m.color, strokeStyle: m.color, lineWidth: 0, hidden: false,
              })),
            },
            onClick: () => {},
          },
          tooltip: {
            callbacks: {
              title: (items) => (items.length ? (items[0].dataset.dots ? items[0].raw.server : bars[items[0].dataIndex].server) : ''),
              label: (item) => {
                if (item.dataset.dots) return item.raw.what + ': ' + figureOf(spec, item.raw.x);
                const b = bars[item.dataIndex];
                let s = spec.unit + ': ' + figureOf(spec, b.value);
                if (b.low != null) {
                  s += ' (' + spec.whisker + ' ' + figureOf(spec, b.low)
                    + ' to ' + figureOf(spec, b.high) + ')';
                }
                return s;
              },
              afterLabel: (item) => {
                if (item.dataset.dots) return [];
                const b = bars[item.dataIndex];
                const lines = [b.model + (b.tier != null ? ', tier T' + b.tier : '')];
                if (b.rank != null) lines.push('rank interval in the row: ' + b.rank + ' (95% of resampled rounds)');
                if (b.spread != null) lines.push('relative figure ' + b.spread + ' (its 95% interval, over its median)');
                if (b.share != null) {
                  lines.push(spec.lower_first ? '×' + b.share.toFixed(2) + ' ' + bars[0].server + '\'s'
                    : Math.round(b.share * 100) + '% of ' + bars[0].server);
                }
                return lines.concat(b.flag_text);
              },
            },
          },
        },
      },
    });
  }

  // A chart of 25 lines told apart by hover alone is not read (issue 29):
  // every line is named at its end, in a column right of the plot, its
  // name beside a swatch of its colour and a thin leader from its last
  // point. Names whose ends crowd are pushed apart (never overlapping) and
  // pulled back inside the canvas; a hidden line (its model clicked off in
  // the legend) loses its name too. chart.$endLabels keeps where each name
  // went, for the browser test.
  const END_ROW = 13;
  const lastPoint = (chart, i) => {
    const d = chart.data.datasets[i];
    const meta = chart.getDatasetMeta(i);
    let last = null;
    d.data.forEach((v, j) => {
      const y = v !== null && typeof v === 'object' ? v.y : v;
      const el = meta.data[j];
      if (y != null && el && Number.isFinite(el.x) && Number.isFinite(el.y)) last = el;
    });
    return last;
  };
  // Each wanted height moved as little as it can so that names stay a row
  // apart and between lo and hi: down from the top, then up from the bottom.
  const spread = (wants, lo, hi) => {
    const ys = wants.slice();
    for (let k = 0; k < ys.length; k += 1) ys[k] = Math.max(ys[k], k ? ys[k - 1] + END_ROW : lo);
    for (let k = ys.length - 1; k >= 0; k -= 1) ys[k] = Math.min(ys[k], k < ys.length - 1 ? ys[k + 1] - END_ROW : hi);
    // More names than rows fit: evenly spaced, the closest they can be.
    if (ys.length && ys[0] < lo) ys.forEach((y, k) => { ys[k] = lo + k * (hi - lo) / Math.max(1, ys.length - 1); });
    return ys;
  };
  const endLabels = {
    id: 'endLabels',
    afterDatasetsDraw(chart) {
      const area = chart.chartArea;
      const ctx = chart.ctx;
      const items = [];
      chart.data.datasets.forEach((d, i) => {
        if (d.dots || !chart.isDatasetVisible(i)) return;
        const p = lastPoint(chart, i);
        if (p) items.push({ text: d.label, color: d.borderColor, px: p.x, py: p.y, want: Math.min(Math.max(p.y, area.top), area.bottom) });
      });
      items.sort((a, b) => a.want - b.want);
      const ys = spread(items.map((it) => it.want), END_ROW / 2, chart.height - END_ROW / 2);
      const x = area.right + 10;
      ctx.save();
      ctx.font = LABEL_FONT;
      ctx.textBaseline = 'middle';
      chart.$endLabels = items.map((it, k) => {
        const y = ys[k];
        ctx.globalAlpha = 0.7;
        ctx.strokeStyle = it.color;
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.moveTo(it.px + 3, it.py);
        ctx.lineTo(area.right + 3, it.py);
        ctx.lineTo(x, y);
        ctx.stroke();
        ctx.globalAlpha = 1;
        ctx.fillStyle = it.color;
        ctx.fillRect(x, y - 4, 8, 8);
        ctx.fillStyle = '#1d2330';
        ctx.fillText(it.text, x + 11, y);
        return { text: it.text, x, y, width: 11 + ctx.measureText(it.text).width };
      });
      ctx.restore();
    },
  };
  // A line chart with its names at the lines' ends: room for the longest
  // name right of the plot.
  function curveChart(canvas, config) {
    const probe = document.createElement('canvas').getContext('2d');
    probe.font = LABEL_FONT;
    const longest = Math.max(0, ...config.data.datasets.map((d) => probe.measureText(d.label || '').width));
    config.plugins = (config.plugins || []).concat([endLabels]);
    config.options.layout = { padding: { right: Math.ceil(longest) + 24 } };
    return new Chart(canvas, config);
  }

  const NINES = [[Math.log10(2), 'p50'], [1, 'p90'], [2, 'p99'], [3, 'p99.9'], [4, 'p99.99']];

  function latency(canvas) {
    const conns = Number(canvas.dataset.connections);
    const datasets = columns.map((server) => {
      const c = cellOf(canvas.dataset.test, conns, server);
      if (!c || !c.latency) return null;
      return {
        label: server + (c.flags ? ' [' + c.flags + ']' : ''),
        server,
        model: modelOf(server),
        flags: c.flags,
        borderColor: color(server),
        backgroundColor: color(server),
        pointRadius: 2,
        borderWidth: 2,
        data: c.latency.points.map((p) => ({ x: p.nines, y: p.ns / 1e6, q: p.quantile })),
      };
    }).filter(Boolean);
    curveChart(canvas, {
      type: 'line',
      data: { datasets },
      options: {
        parsing: false,
        scales: {
          x: {
            type: 'linear', min: Math.log10(2), max: 4,
            title: { display: true, text: 'percentile' },
            afterBuildTicks: (axis) => { axis.ticks = NINES.map(([v]) => ({ value: v })); },
            ticks: { callback: (v) => (NINES.find(([n]) => Math.abs(n - v) < 1e-9) || [0, ''])[1] },
          },
          y: { type: 'logarithmic', title: { display: true, text: 'latency (ms, log scale)' } },
        },
        plugins: {
          legend: legendFor(datasets),
          tooltip: {
            callbacks: {
              title: (items) => 'p' + +(items[0].raw.q * 100).toFixed(2),
              label: (item) => item.dataset.label + ': ' + ms(item.raw.y * 1e6),
              afterLabel: (item) => flagLines(item.dataset.flags),
            },
          },
        },
      },
    });
  }

  // Changes sit on a log2 axis: a doubling and a halving look the same
  // size, and one +500% cell does not flatten every other bar.
  function ratio(change) {
    return Math.log2(Math.max(1 + change, 1e-3));
  }

  function percent(change) {
    const p = change * 100;
    return (p > 0 ? '+' : '') + +p.toPrecision(Math.abs(p) < 1 ? 1 : 2) + '%';
  }

  function change(canvas) {
    const rows = data.rows.filter((r) => r.metric === canvas.dataset.test);
    canvas.parentElement.style.height = Math.max(200, 28 * rows.length + 80) + 'px';
    const tone = { better: '#1a7f37', worse: '#c62828', no_change: '#9498a0', too_few: '#c9ccd3' };
    // Two repetitions can give an interval of +1,000,000%: the axis stops at
    // 1/16 and 16 times (whiskers run off the edge; the table has them).
    const points = rows.map((r) => {
      const ci = r.change_ci95 || [r.change, r.change];
      return { x: ratio(r.change), xMin: ratio(ci[0]), xMax: ratio(ci[1]) };
    });
    const edge = 4;
    const lowest = Math.min(...points.map((p) => Math.min(p.x, p.xMin)));
    const highest = Math.max(...points.map((p) => Math.max(p.x, p.xMax)));
    new Chart(canvas, {
      type: 'barWithErrorBars',
      data: {
        labels: rows.map((r) => r.test + ' c=' + r.connections + ' ' + r.server),
        datasets: [{
          label: 'change (B vs A)',
          backgroundColor: rows.map((r) => tone[r.verdict]),
          data: points,
        }],
      },
      options: {
        indexAxis: 'y',
        scales: {
          x: {
            title: { display: true, text: 'change of the median (ratio scale: +100% is as far from 0 as -50%)' },
            min: lowest < -edge ? -edge : undefined,
            max: highest > edge ? edge : undefined,
            ticks: { callback: (v) => percent(2 ** v - 1) },
          },
        },
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              label: (item) => {
                const r = rows[item.dataIndex];
                return (r.change * 100).toFixed(1) + '%, p = ' + r.p.toFixed(3) + ', ' + r.verdict.replace('_', ' ');
              },
            },
          },
        },
      },
    });
  }

  // The allocator study (crates/report/src/axes.rs): per base server, one bar
  // per allocator in that allocator's fixed colour.
  const allocatorsElement = document.getElementById('report-allocators');
  const ALLOCATOR_CHARTS = allocatorsElement ? JSON.parse(allocatorsElement.textContent) : [];
  function allocators(canvas) {
    const c = ALLOCATOR_CHARTS[Number(canvas.dataset.index)];
    const rps = canvas.dataset.metric === 'rps';
    const datasets = c.series.map((s) => ({
      label: s.allocator,
      allocator: s.allocator,
      backgroundColor: s.color,
      data: rps ? s.rps.map((v) => v || GAP) : s.rss_mib,
    }));
    new Chart(canvas, {
      type: rps ? 'barWithErrorBars' : 'bar',
      data: { labels: c.servers, datasets },
      options: {
        scales: { y: { beginAtZero: true, title: { display: true, text: rps ? 'requests/s' : 'MiB' } } },
      },
    });
  }

  // One server's figure against the test's connection counts, a line per
  // server in its colour; threads and memory span decades, so log scales.
  function curve(field, yTitle, log) {
    return (canvas) => {
      const test = testOf(canvas.dataset.test);
      const valueOf = {
        rps: (x) => (x.rps ? x.rps.median : null),
        threads: (x) => x.peak_threads,
        rss: (x) => (x.peak_rss_bytes == null ? null : x.peak_rss_bytes / 1048576),
      }[field];
      const datasets = columns.map((server) => ({
        label: server,
        server,
        model: modelOf(server),
        borderColor: color(server),
        backgroundColor: color(server),
        spanGaps: true,
        data: test.connections.map((n) => {
          const cell = cellOf(test.name, n, server);
          const v = cell ? valueOf(cell) : null;
          return v == null || (log && v <= 0) ? null : v;
        }),
      })).filter((ds) => ds.data.some((v) => v != null));
      curveChart(canvas, {
        type: 'line',
        data: { labels: test.connections.map((n) => num(n) + ' conn.'), datasets },
        options: {
          scales: { y: { type: log ? 'logarithmic' : 'linear', beginAtZero: !log, title: { display: true, text: yTitle } } },
          plugins: { legend: legendFor(datasets) },
        },
      });
    };
  }

  // The scenario kinds' curves (crates/report/src/kind_html.rs), from the
  // report data's kinds: a series per server in the report's column order
  // and in its colour, like every other per-server chart. Their figures at
  // one level are ranked charts (#report-ranked), drawn above.
  const KINDS = data.kinds || {};
  const series = (server, extra) => Object.assign({
    label: server, server, model: modelOf(server), borderColor: color(server), backgroundColor: color(server),
  }, extra);
  const inColumns = (rows) => columns.flatMap((s) => rows.filter((r) => r.server === s));
  const perConn = (b) => {
    const a = Math.abs(b);
    return a < 1024 ? b.toFixed(0) + ' B/conn' : a < 1048576 ? (b / 1024).toFixed(1) + ' KiB/conn'
      : (b / 1048576).toFixed(2) + ' MiB/conn';
  };
  const union = (lists) => [...new Set(lists.flat())].sort((a, b) => a - b);
  const positive = (v) => (v == null || v <= 0 ? null : v);
  // Connection counts usually span decades: a log axis when they do.
  const countAxis = (xs, title) => ({
    type: Math.max(...xs) / Math.max(1, Math.min(...xs)) >= 20 ? 'logarithmic' : 'linear',
    title: { display: true, text: title },
    ticks: { callback: (v) => num(v) },
  });
  function idlePss(canvas) {
    const rows = inColumns((KINDS.idle || []).filter((r) => r.test === canvas.dataset.test && r.levels.length));
    const datasets = rows.map((r) => series(r.server, {
      label: r.server + ' ' + (r.bytes_per_connection == null ? '(no fit)' : perConn(r.bytes_per_connection)),
      pointRadius: 3,
      borderWidth: 2,
      data: r.levels.map((l) => ({ x: l.connections, y: l.pss_bytes / 1048576 })),
    }));
    curveChart(canvas, {
      type: 'line',
      data: { datasets },
      options: {
        scales: {
          x: countAxis(union(rows.map((r) => r.levels.map((l) => l.connections))), 'idle connections held'),
          y: { title: { display: true, text: 'server PSS (MiB)' } },
        },
        // Up to 8 servers the legend carries each one's slope in full; past
        // that it names the models, and the table beside has every slope.
        plugins: { legend: legendFor(datasets) },
      },
    });
  }

  function sweep(canvas) {
    const rows = inColumns((KINDS.rate_sweep || []).filter((r) => r.test === canvas.dataset.test && r.steps.length));
    const datasets = rows.map((r) => {
      // The knee is a median over repetitions: marked on the nearest step.
      let at = -1;
      if (r.knee_per_s != null) {
        r.steps.forEach((s, i) => {
          if (at < 0 || Math.abs(s.offered_per_s - r.knee_per_s) < Math.abs(r.steps[at].offered_per_s - r.knee_per_s)) at = i;
        });
      }
      return series(r.server, {
        label: r.server + (r.knee_per_s == null ? ' (no knee)' : ' (knee ' + num(r.knee_per_s) + '/s)'),
        borderWidth: 2,
        pointStyle: r.steps.map((s, i) => (i === at ? 'triangle' : 'circle')),
        pointRadius: r.steps.map((s, i) => (i === at ? 9 : 3)),
        data: r.steps.map((s) => ({ x: s.offered_per_s, y: positive(s.p99_ns / 1e6) })),
      });
    });
    curveChart(canvas, {
      type: 'line',
      data: { datasets },
      options: {
        scales: {
          x: { type: 'linear', beginAtZero: true, title: { display: true, text: 'offered requests/s' }, ticks: { callback: (v) => num(v) } },
          y: { type: 'logarithmic', title: { display: true, text: 'p99 latency (ms, log scale)' } },
        },
        // Up to 8 servers the legend carries each one's knee in full; past
        // that it names the models, and the table beside has every knee.
        plugins: { legend: legendFor(datasets) },
      },
    });
  }

  // Throughput against time since the server process started (issue 28),
  // both axes logarithmic: a line per server from its first fresh cell of
  // the test (crates/report/src/startup.rs picks it), a point per warm-up
  // window at its middle. A window without a figure, or of nothing, is a gap.
  function startup(canvas) {
    const curves = ((data.startup || {}).curves || []).filter((c) => c.test === canvas.dataset.test);
    const datasets = curves.map((c) => {
      const rep = (data.repetitions || []).find((r) => r.test === c.test && r.server === c.server
        && r.connections === c.connections && r.repetition === c.repetition);
      const w = rep && rep.steady_state;
      if (!w) return null;
      return series(c.server, {
        label: c.server + ' (' + num(c.connections) + ' conn.)',
        pointRadius: 1.5,
        borderWidth: 2,
        spanGaps: false,
        data: w.curve.map((v, i) => ({ x: w.since_start_s + (i + 0.5) * w.window_s, y: positive(v) })),
      });
    }).filter(Boolean);
    curveChart(canvas, {
      type: 'line',
      data: { datasets },
      options: {
        parsing: false,
        scales: {
          x: { type: 'logarithmic', title: { display: true, text: 'seconds since the server started (log scale)' } },
          y: { type: 'logarithmic', title: { display: true, text: 'requests/s (log scale)' } },
        },
        plugins: {
          legend: legendFor(datasets),
          tooltip: {
            callbacks: {
              title: (items) => (items.length ? items[0].raw.x.toFixed(2) + ' s since start' : ''),
              label: (item) => item.dataset.label + ': ' + num(item.raw.y) + ' requests/s',
            },
          },
        },
      },
    });
  }

  const builders = {
    startup,
    'idle-pss': idlePss,
    sweep,
    allocators,
    'curve-rps': curve('rps', 'requests/s', false),
    'curve-threads': curve('threads', 'threads', true),
    'curve-rss': curve('rss', 'MiB', true),
    ranked,
    latency,
    change,
  };
  let drawn = 0;
  for (const canvas of document.querySelectorAll('canvas[data-chart]')) {
    builders[canvas.dataset.chart](canvas);
    drawn += 1;
  }
  document.body.dataset.charts = String(drawn);
})();
