// Draws the report's charts with Chart.js from the JSON the page carries
// (#report-data, #report-flags for what each flag mark means, and
// #report-colors for each server's colour: a shade of its threading model's
// hue, chosen by crates/report/src/palette.rs); the tables and the colour key
// are already in the page. Each series carries its server and model, and
// series come in the report's column order (by model, then name); the
// throughput charts add one dataset of dots (dots: true), each repetition in
// its server's colour; the start-up chart draws each server's warm-up curve
// from its repetition's steady_state. When every
// chart is drawn, body[data-charts] holds their number, for the browser test.
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

  // Writes each point's flag marks above it, so a qualified number is never
  // shown without its qualifier.
  const flagMarks = {
    id: 'flagMarks',
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx;
      ctx.save();
      ctx.font = 'bold 11px sans-serif';
      ctx.fillStyle = '#7a4d00';
      ctx.textAlign = 'center';
      chart.data.datasets.forEach((ds, i) => {
        const meta = chart.getDatasetMeta(i);
        if (meta.hidden || !ds.flags) return;
        meta.data.forEach((el, j) => {
          const f = ds.flags[j];
          if (!f || !el || missing(ds.data[j])) return;
          const pos = el.tooltipPosition();
          ctx.fillText(f, pos.x, Math.max(10, pos.y - 14));
        });
      });
      ctx.restore();
    },
  };

  const GAP = { y: null, yMin: null, yMax: null };
  const missing = (v) => v == null || (typeof v === 'object' && v.y == null);

  // Each repetition as a dot over its server's bar, in the server's colour,
  // so the spread is seen and not only read. One dataset for the chart (the
  // series stay one per server), placed on the category axis by fractional
  // index, unparsed (a category axis would round a parsed index): category i
  // spans i-0.5..i+0.5, its bars share the middle 80% (Chart.js's
  // categoryPercentage) in column order. A second x axis would not do: Chart.js
  // 4.5 narrows grouped bars by the number of x axes. Recomputed before each
  // update, so hiding a server in the legend moves the dots with the bars.
  const DOT_BORDER = '#1d2330';
  function dotsDataset(test, repsOf) {
    return {
      type: 'scatter',
      label: 'repetitions',
      dots: true,
      parsing: false,
      data: [],
      repsOf,
      test,
      pointRadius: 3.5,
      pointHoverRadius: 5,
      pointBorderWidth: 1,
      pointBorderColor: DOT_BORDER,
      pointBackgroundColor: [],
    };
  }

  const placeDots = {
    id: 'placeDots',
    beforeUpdate(chart) {
      const i = chart.data.datasets.findIndex((d) => d.dots);
      if (i < 0) return;
      const dots = chart.data.datasets[i];
      const bars = chart.data.datasets
        .map((ds, k) => ({ ds, k }))
        .filter(({ ds, k }) => !ds.dots && (chart.getDatasetMeta(k).hidden !== true));
      const chunk = 0.8 / Math.max(1, bars.length);
      const points = [];
      bars.forEach(({ ds }, slot) => {
        dots.test.connections.forEach((conns, x) => {
          if (missing(ds.data[x])) return;
          const reps = dots.repsOf(dots.test.name, conns, ds.server);
          const centre = x - 0.4 + chunk * (slot + 0.5);
          reps.forEach((r, j) => {
            // Spread across the middle half of the bar, so equal values stay apart.
            const off = reps.length > 1 ? (j / (reps.length - 1) - 0.5) * chunk * 0.5 : 0;
            points.push({ x: centre + off, y: r.value, server: ds.server, connections: conns, what: r.what });
          });
        });
      });
      // Unparsed data must come sorted by x, or Chart.js skips points.
      points.sort((a, b) => a.x - b.x);
      dots.data = points;
      dots.pointBackgroundColor = points.map((p) => color(p.server));
    },
  };

  // Each good repetition's requests/s of a cell, as the report lists them.
  const rawReps = (test, conns, server) => (data.repetitions || [])
    .filter((r) => r.test === test && r.connections === conns && r.server === server && r.ok && r.result)
    .map((r) => ({ value: r.result.rps, what: 'repetition ' + r.repetition }));
  const normalisedElement = document.getElementById('report-normalised');
  const NORMALISED = normalisedElement ? JSON.parse(normalisedElement.textContent) : [];
  const normalisedReps = (test, conns, server) => {
    const c = NORMALISED.find((x) => x.test === test && x.connections === conns && x.server === server);
    return c ? c.values.map((v, j) => ({ value: v, what: 'good repetition ' + (j + 1) + ', normalised' })) : [];
  };

  function groupedBars(canvas, valueOf, yTitle, withCi, repsOf, flagsOf) {
    const test = testOf(canvas.dataset.test);
    const datasets = columns.map((server) => {
      const cells = test.connections.map((c) => cellOf(test.name, c, server));
      return {
        label: server,
        server,
        model: modelOf(server),
        backgroundColor: color(server),
        flags: cells.map((c) => (c ? (flagsOf ? flagsOf(c) : c.flags) : '')),
        data: cells.map((c) => (c ? valueOf(c) : null)).map((v) => (missing(v) ? (withCi ? GAP : null) : v)),
      };
    }).filter((ds) => ds.data.some((v) => !missing(v)));
    const scales = { y: { beginAtZero: true, title: { display: true, text: yTitle } } };
    if (repsOf) datasets.push(dotsDataset(test, repsOf));
    new Chart(canvas, {
      type: withCi ? 'barWithErrorBars' : 'bar',
      data: { labels: test.connections.map((c) => num(c) + ' conn.'), datasets },
      plugins: [flagMarks, placeDots],
      options: {
        layout: { padding: { top: 16 } },
        scales,
        plugins: {
          // The dots are explained by the caption, not a legend entry.
          legend: { labels: { filter: (item, d) => !d.datasets[item.datasetIndex].dots } },
          tooltip: {
            callbacks: {
              // A dot's x is a place on the hidden axis, not a label.
              title: (items) => (items.length && items[0].dataset.dots
                ? num(items[0].raw.connections) + ' conn.' : (items.length ? items[0].label : '')),
              label: (item) => {
                if (item.dataset.dots) return item.raw.server + ', ' + item.raw.what + ': ' + num(item.raw.y);
                const v = item.raw && typeof item.raw === 'object' ? item.raw : { y: item.raw };
                let s = item.dataset.label + ': ' + (Math.abs(v.y) >= 100 ? num(v.y) : Number(v.y).toPrecision(3));
                if (v.yMin != null) s += ' (95% CI ' + num(v.yMin) + ' to ' + num(v.yMax) + ')';
                return s;
              },
              afterLabel: (item) => (item.dataset.flags ? flagLines(item.dataset.flags[item.dataIndex]) : []),
            },
          },
        },
      },
    });
  }

  // A summary as a bar with its whisker; the error-bar plugin reads every
  // point's fields, so a gap is an object of nulls, not null.
  function whisker(s) {
    if (!s) return GAP;
    const ci = s.ci95 || [s.median, s.median];
    return { y: s.median, yMin: Math.max(0, ci[0]), yMax: ci[1] };
  }

  function throughput(canvas) {
    groupedBars(canvas, (c) => whisker(c.rps), 'requests/s', true, rawReps);
  }

  // The same, normalised by the machine-speed control, with the same marks:
  // the noisy one (~) judges the figures the row is ranked by, which are
  // these whenever the whole row has them.
  function normalised(canvas) {
    groupedBars(canvas, (c) => whisker(c.rps ? c.rps_normalised : null),
      'requests/s, normalised', true, normalisedReps);
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
    new Chart(canvas, {
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
      new Chart(canvas, {
        type: 'line',
        data: { labels: test.connections.map((n) => num(n) + ' conn.'), datasets },
        options: {
          scales: { y: { type: log ? 'logarithmic' : 'linear', beginAtZero: !log, title: { display: true, text: yTitle } } },
          plugins: { legend: { position: 'right', labels: { boxWidth: 10, font: { size: 10 } } } },
        },
      });
    };
  }

  // The scenario kinds' charts (crates/report/src/kind_html.rs), from the
  // report data's kinds: a series per server in the report's column order
  // and in its colour, like every other per-server chart.
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
  const barsOf = (labels, datasets, yTitle, log) => ({
    type: 'bar',
    data: { labels, datasets },
    options: {
      scales: { y: { type: log ? 'logarithmic' : 'linear', beginAtZero: !log, title: { display: true, text: yTitle } } },
    },
  });

  function idlePss(canvas) {
    const rows = inColumns((KINDS.idle || []).filter((r) => r.test === canvas.dataset.test && r.levels.length));
    const datasets = rows.map((r) => series(r.server, {
      label: r.server + ' ' + (r.bytes_per_connection == null ? '(no fit)' : perConn(r.bytes_per_connection)),
      pointRadius: 3,
      borderWidth: 2,
      data: r.levels.map((l) => ({ x: l.connections, y: l.pss_bytes / 1048576 })),
    }));
    new Chart(canvas, {
      type: 'line',
      data: { datasets },
      options: {
        scales: {
          x: countAxis(union(rows.map((r) => r.levels.map((l) => l.connections))), 'idle connections held'),
          y: { title: { display: true, text: 'server PSS (MiB)' } },
        },
        // The legend carries each server's slope in full: beside the plot
        // when there are many, so the lines keep their height.
        plugins: { legend: { position: datasets.length > 8 ? 'right' : 'top', labels: { boxWidth: 10, font: { size: 11 } } } },
      },
    });
  }

  function idleCpu(canvas) {
    const rows = inColumns((KINDS.idle || []).filter((r) => r.test === canvas.dataset.test && r.levels.length));
    const levels = union(rows.map((r) => r.levels.map((l) => l.connections)));
    const datasets = rows.map((r) => series(r.server, {
      data: levels.map((c) => { const l = r.levels.find((x) => x.connections === c); return l ? l.cpu_cores_mean : null; }),
    }));
    new Chart(canvas, barsOf(levels.map((c) => num(c) + ' conn.'), datasets, 'cores busy while idle (mean)', false));
  }

  function stormTime(canvas) {
    const rows = inColumns((KINDS.storm || []).filter((r) => r.test === canvas.dataset.test));
    const clients = union(rows.map((r) => [r.clients]));
    const servers = [...new Set(rows.map((r) => r.server))];
    const datasets = servers.map((s) => series(s, {
      data: clients.map((c) => { const r = rows.find((x) => x.server === s && x.clients === c); return r ? r.all_done_s : null; }),
    })).filter((d) => d.data.some((v) => v != null));
    new Chart(canvas, barsOf(clients.map((c) => num(c) + ' clients'), datasets, 'seconds until all done', false));
  }

  function stormConnect(canvas) {
    const clients = Number(canvas.dataset.connections);
    const rows = inColumns((KINDS.storm || []).filter((r) => r.test === canvas.dataset.test && r.clients === clients));
    const datasets = rows.map((r) => series(r.server, {
      data: [r.connect_p50_ns, r.connect_p99_ns, r.connect_max_ns].map((v) => positive(v == null ? null : v / 1e6)),
    })).filter((d) => d.data.some((v) => v != null));
    new Chart(canvas, barsOf(['p50', 'p99', 'slowest'], datasets, 'connect latency (ms, log scale)', true));
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
    new Chart(canvas, {
      type: 'line',
      data: { datasets },
      options: {
        scales: {
          x: { type: 'linear', beginAtZero: true, title: { display: true, text: 'offered requests/s' }, ticks: { callback: (v) => num(v) } },
          y: { type: 'logarithmic', title: { display: true, text: 'p99 latency (ms, log scale)' } },
        },
        // The legend carries each server's knee in full: beside the plot
        // when there are many, so the lines keep their height.
        plugins: { legend: { position: datasets.length > 8 ? 'right' : 'top', labels: { boxWidth: 10, font: { size: 11 } } } },
      },
    });
  }

  // Ranked lowest first, so one bar per category: each server's series has
  // its value at its own rank only, and bars are not grouped side by side.
  function fixedCpu(canvas) {
    const ranked = (KINDS.fixed_rate || []).filter((r) => r.test === canvas.dataset.test && r.server_cpu_us_per_request != null);
    const labels = ranked.map((r) => r.server);
    const datasets = inColumns(ranked).map((r) => series(r.server, {
      data: labels.map((l) => (l === r.server ? r.server_cpu_us_per_request : null)),
    }));
    const config = barsOf(labels, datasets, 'server CPU per request (µs)', false);
    config.options.datasets = { bar: { grouped: false } };
    config.options.plugins = { legend: { display: false } };
    new Chart(canvas, config);
  }

  function shortLived(canvas) {
    const conns = Number(canvas.dataset.connections);
    const g = (KINDS.short_lived || []).find((x) => x.endpoint === canvas.dataset.test && x.connections === conns);
    const labels = g.columns.map((c) => (c.requests_per_connection == null ? 'keep-alive'
      : c.requests_per_connection === 1 ? 'K = 1 (keep-alive off)' : 'K = ' + c.requests_per_connection) + ' (' + c.test + ')');
    const datasets = inColumns(g.rows).map((r) => series(r.server, { data: r.rps }));
    new Chart(canvas, barsOf(labels, datasets, 'requests/s', false));
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
    new Chart(canvas, {
      type: 'line',
      data: { datasets },
      options: {
        parsing: false,
        scales: {
          x: { type: 'logarithmic', title: { display: true, text: 'seconds since the server started (log scale)' } },
          y: { type: 'logarithmic', title: { display: true, text: 'requests/s (log scale)' } },
        },
        plugins: {
          legend: { position: datasets.length > 8 ? 'right' : 'top', labels: { boxWidth: 10, font: { size: 11 } } },
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
    'idle-cpu': idleCpu,
    'storm-time': stormTime,
    'storm-connect': stormConnect,
    sweep,
    'fixed-cpu': fixedCpu,
    'short-lived': shortLived,
    allocators,
    'curve-rps': curve('rps', 'requests/s', false),
    'curve-threads': curve('threads', 'threads', true),
    'curve-rss': curve('rss', 'MiB', true),
    throughput,
    normalised,
    latency,
    change,
    cpu: (c) => groupedBars(c, (x) => x.server_cpu_cores, 'cores busy', false),
    efficiency: (c) => groupedBars(c, (x) => x.requests_per_cpu_s, 'requests per CPU-second', false),
    memory: (c) => groupedBars(c, (x) => (x.peak_rss_bytes == null ? null : x.peak_rss_bytes / 1048576), 'MiB', false),
  };
  let drawn = 0;
  for (const canvas of document.querySelectorAll('canvas[data-chart]')) {
    builders[canvas.dataset.chart](canvas);
    drawn += 1;
  }
  document.body.dataset.charts = String(drawn);
})();
