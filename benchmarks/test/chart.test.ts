import { describe, expect, it } from 'vitest';
import { contentionChartSpec, renderSvg } from '../src/report/chart.js';

const points = ['postgres', 'redis', 'etcd'].flatMap((backend, b) =>
  ['fleetcron', 'floor'].flatMap((variant, v) =>
    [1, 2, 4].map((instances) => ({
      backend,
      variant,
      instances,
      claimsPerSec: 1000 * (b + 1) * instances * (v + 1),
      p50Ms: 0.5 * (b + 1),
    })),
  ),
);

describe('contention chart', () => {
  it('renders an SVG headless, with one series per backend and variant in its legends', async () => {
    const svg = await renderSvg(contentionChartSpec(points, 'test chart'));
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('</svg>');
    for (const name of ['postgres', 'redis', 'etcd', 'fleetcron', 'floor', 'test chart']) {
      expect(svg).toContain(name);
    }
    // every point of every series is drawn, in both panels (throughput and latency)
    for (const backend of ['postgres', 'redis', 'etcd']) {
      for (const variant of ['fleetcron', 'floor']) {
        const marks = svg.split(`backend: ${backend}; variant: ${variant}"`).length - 1;
        expect(marks).toBe(2 * (3 + 1)); // per panel: 3 points and the line through them
      }
    }
    expect(svg).toContain('claims per second (all instances)');
  });

  it('drops points without throughput (a log scale cannot show 0)', () => {
    const spec = contentionChartSpec(
      [...points.slice(0, 2), { ...points[0]!, instances: 8, claimsPerSec: 0 }],
      't',
    ) as { data: { values: unknown[] } };
    expect(spec.data.values).toHaveLength(2);
  });
});
