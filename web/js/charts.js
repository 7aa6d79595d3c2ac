// Charts over time with uPlot (vendored: web/vendor/uplot, MIT). Series share the time axis.
import uPlot from '../vendor/uplot/uPlot.esm.js';
import {h} from './dom.js';

const palette = ['#2f5bd3', '#1a7f37', '#c62828', '#9a6700', '#7b3fb5', '#0a7a8c', '#b3476b', '#5a6473'];

// A line chart in a new element: `times` in Unix seconds, `series` [{label, values}], `unit` for
// the y axis. An empty `times` is a note, not an empty chart.
export function lineChart(title, times, series, unit, {signal} = {}) {
  const box = h('div', {class: 'chart', 'data-chart': title});
  if (times.length === 0) {
    box.append(h('p', {class: 'muted'}, 'No samples yet: allotd samples every --history-interval.'));
    return box;
  }
  const opts = {
    title, width: 600, height: 220,
    scales: {x: {time: true}},
    axes: [{}, {label: unit, size: 50}],
    series: [{}, ...series.map((s, i) => ({label: s.label, stroke: palette[i % palette.length], width: 1.5}))],
  };
  const plot = new uPlot(opts, [times, ...series.map((s) => s.values)], box);
  // Fit the chart to its box, now and as the window changes.
  const fit = () => plot.setSize({width: Math.max(300, box.clientWidth || 600), height: 220});
  requestAnimationFrame(fit);
  window.addEventListener('resize', fit, {signal});
  signal?.addEventListener('abort', () => plot.destroy());
  return box;
}

// GET /v1/history samples as chart columns: times, and per key the value `pick(row)` (0 where a
// sample has no row for the key).
export function columns(samples, rowsOf, keyOf, pick) {
  const times = samples.map((s) => Date.parse(s.time) / 1000);
  const keys = [...new Set(samples.flatMap((s) => rowsOf(s).map(keyOf)))].sort();
  const series = keys.map((k) => ({
    label: k,
    values: samples.map((s) => {
      const row = rowsOf(s).find((r) => keyOf(r) === k);
      return row ? pick(row) : 0;
    }),
  }));
  return {times, series};
}
