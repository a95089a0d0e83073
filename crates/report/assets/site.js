// Draws the site's charts with Chart.js from the JSON the page carries
// (#report-data: { charts: [...] }, written by crates/report/src/site/):
// each canvas[data-chart] takes charts[data-index]. A timeline is a line
// per server over the suite's runs, each point its median with the 95%
// interval as a whisker, and a dashed line before every run whose host,
// kernel or commit differs from the run before it (the canvas's
// data-marks says how many were drawn, for the browser test). A score
// chart is a bar per server with its bootstrap interval: a score is never
// drawn without one. When every chart is drawn, body[data-charts] holds
// their number.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  Chart.register(ChartErrorBars.BarWithErrorBarsController, ChartErrorBars.BarWithErrorBar,
    ChartErrorBars.LineWithErrorBarsController, ChartErrorBars.PointWithErrorBar);
  // Still pictures: a page is read and printed, and screenshots must be whole.
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';

  const num = (v) => (Math.abs(v) >= 100 || Number.isInteger(v) ? Math.round(v).toLocaleString('en-US')
    : String(+Number(v).toPrecision(3)));
  // The error-bars plugin reads every point's fields: a gap is an object of nulls.
  const GAP = { y: null, yMin: null, yMax: null };
  const MARK = '#b3261e';

  // The environment changes: a dashed line halfway between the run before
  // and the run after, its keys written at the top.
  const changeMarks = (marks) => ({
    id: 'changeMarks',
    afterDatasetsDraw(chart) {
      const { ctx, chartArea: area } = chart;
      const x = chart.scales.x;
      let drawn = 0;
      ctx.save();
      ctx.strokeStyle = MARK;
      ctx.fillStyle = MARK;
      ctx.lineWidth = 1.5;
      ctx.setLineDash([5, 4]);
      ctx.font = '11px sans-serif';
      marks.forEach((m, k) => {
        const at = x.getPixelForValue(m.at - 0.5);
        if (!Number.isFinite(at) || at < area.left || at > area.right) return;
        ctx.beginPath();
        ctx.moveTo(at, area.top);
        ctx.lineTo(at, area.bottom);
        ctx.stroke();
        // Staggered, so two changes close together stay readable, and on
        // white, so a line of data under the label does not hide it.
        const y = area.top + 10 + (k % 2) * 12;
        const w = ctx.measureText(m.text).width;
        ctx.save();
        ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
        ctx.fillRect(at + 2, y - 9, w + 2, 12);
        ctx.restore();
        ctx.fillText(m.text, at + 3, y);
        drawn += 1;
      });
      ctx.restore();
      chart.canvas.dataset.marks = String(drawn);
    },
  });

  function timeline(canvas, c) {
    const datasets = c.series.map((s) => ({
      label: s.label,
      server: s.label,
      borderColor: s.color,
      backgroundColor: s.color,
      errorBarColor: s.color,
      errorBarWhiskerColor: s.color,
      pointRadius: 3.5,
      borderWidth: 2,
      spanGaps: false,
      notes: s.points.map((p) => (p ? p.note : [])),
      data: s.points.map((p) => (p ? { y: p.y, yMin: p.low == null ? p.y : p.low, yMax: p.high == null ? p.y : p.high } : GAP)),
    }));
    new Chart(canvas, {
      type: 'lineWithErrorBars',
      data: { labels: c.labels, datasets },
      plugins: [changeMarks(c.marks)],
      options: {
        layout: { padding: { top: 8 } },
        scales: {
          // Offset: each run in the middle of its slot, so a suite of one
          // run is not drawn against the axis, and no whisker is cut.
          x: { offset: true, title: { display: true, text: 'run (oldest left)' } },
          y: { beginAtZero: true, title: { display: true, text: c.y_title }, ticks: { callback: (v) => num(v) } },
        },
        plugins: {
          legend: { labels: { boxWidth: 10, font: { size: 11 } } },
          tooltip: {
            callbacks: {
              title: (items) => (items.length ? c.labels[items[0].dataIndex].join(' · ') : ''),
              label: (item) => item.dataset.notes[item.dataIndex] || [],
              afterBody: (items) => (items.length ? c.marks.filter((m) => m.at === items[0].dataIndex).map((m) => m.detail) : []),
            },
          },
        },
      },
    });
  }

  function score(canvas, c) {
    const s = c.series[0];
    new Chart(canvas, {
      type: 'barWithErrorBars',
      data: {
        labels: c.labels.map((l) => l.join(' ')),
        datasets: [{
          label: s.label,
          backgroundColor: s.colors,
          notes: s.points.map((p) => (p ? p.note : [])),
          data: s.points.map((p) => (p ? { x: p.y, xMin: p.low, xMax: p.high } : { x: null, xMin: null, xMax: null })),
        }],
      },
      options: {
        indexAxis: 'y',
        scales: { x: { min: 0, max: 1, title: { display: true, text: c.y_title } } },
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: (item) => item.dataset.notes[item.dataIndex] } },
        },
      },
    });
  }

  const builders = { timeline, score };
  let drawn = 0;
  for (const canvas of document.querySelectorAll('canvas[data-chart]')) {
    builders[canvas.dataset.chart](canvas, data.charts[Number(canvas.dataset.index)]);
    drawn += 1;
  }
  document.body.dataset.charts = String(drawn);
})();
