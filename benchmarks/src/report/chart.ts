import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** One point of the contention chart. */
export interface ChartPoint {
  backend: string;
  variant: string;
  instances: number;
  claimsPerSec: number;
  p50Ms: number;
}

/**
 * A vega-lite spec: claims/s (left) and claim p50 latency (right) against the number of
 * instances, one colour per backend, one dash per variant (fleetcron, floor, peer).
 */
export function contentionChartSpec(points: readonly ChartPoint[], title: string): TopLevelSpec {
  const encoding = (field: 'claimsPerSec' | 'p50Ms', label: string) => ({
    x: {
      field: 'instances',
      type: 'quantitative' as const,
      scale: { type: 'log' as const, base: 2 },
      axis: { values: [...new Set(points.map((p) => p.instances))], title: 'instances' },
    },
    y: {
      field,
      type: 'quantitative' as const,
      scale: { type: 'log' as const },
      title: label,
    },
    color: { field: 'backend', type: 'nominal' as const },
    strokeDash: { field: 'variant', type: 'nominal' as const },
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    data: {
      values: points.filter((p) => p.claimsPerSec > 0) as unknown as Record<string, unknown>[],
    },
    hconcat: [
      {
        width: 360,
        height: 260,
        mark: { type: 'line', point: true },
        encoding: encoding('claimsPerSec', 'claims per second (all instances)'),
      },
      {
        width: 360,
        height: 260,
        mark: { type: 'line', point: true },
        encoding: encoding('p50Ms', 'claim latency p50 (ms)'),
      },
    ],
    config: { background: 'white' },
  } as TopLevelSpec;
}

/** Renders a vega-lite spec to an SVG string, headless (no canvas, no browser). */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const vegaSpec = compile(spec).spec;
  const view = new View(parse(vegaSpec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
