import { describe, expect, it } from 'vitest';
import { int, mib, ms, times } from '../src/report/format.js';
import { table } from '../src/report/markdown.js';
import { contentionTable, ratioRows, renderMarkdown, violations } from '../src/report/report.js';
import { summarize } from '../src/stats.js';
import { cell, fleetRow, report } from './helpers.js';

describe('table', () => {
  it('renders a header, an alignment rule and rows', () => {
    expect(
      table(
        ['name', 'n'],
        [
          ['a', '1'],
          ['b', '22'],
        ],
      ),
    ).toBe(['| name | n |', '| :--- | ---: |', '| a | 1 |', '| b | 22 |'].join('\n'));
  });

  it('escapes pipes and newlines, pads short rows, takes explicit alignment', () => {
    const out = table(['x', 'y', 'z'], [['a|b', 'c\nd']], ['left', 'left', 'right']);
    expect(out.split('\n')[1]).toBe('| :--- | :--- | ---: |');
    expect(out.split('\n')[2]).toBe('| a\\|b | c d |  |');
  });
});

describe('format', () => {
  it('prints figures and n/a for what is missing', () => {
    expect(int(1234567.4)).toBe('1 234 567');
    expect(ms(0.4567)).toBe('0.46');
    expect(ms(0.0123)).toBe('0.012');
    expect(ms(45.67)).toBe('45.7');
    expect(ms(4567)).toBe('4 567');
    expect(times(0.8765)).toBe('0.88×');
    expect(times(null)).toBe('n/a');
    expect(ms(Number.NaN)).toBe('n/a');
    expect(mib(3 * 1024 * 1024)).toBe('3.0 MiB');
  });
});

describe('ratioRows', () => {
  it('divides fleetcron by floor and peer, for throughput and p50', () => {
    const rows = ratioRows([
      cell({ variant: 'fleetcron', claimsPerSec: 800, latency: summarize([2]) }),
      cell({ variant: 'floor', claimsPerSec: 1000, latency: summarize([1]) }),
      cell({ variant: 'peer', claimsPerSec: 400, latency: summarize([4]) }),
    ]);
    expect(rows).toEqual([
      {
        backend: 'redis',
        instances: 2,
        fleetcronPerSec: 800,
        floorPerSec: 1000,
        peerPerSec: 400,
        throughputVsFloor: 0.8,
        p50VsFloor: 2,
        throughputVsPeer: 2,
        p50VsPeer: 0.5,
      },
    ]);
  });

  it('leaves the ratio out when the other side failed', () => {
    const [row] = ratioRows([
      cell({ variant: 'fleetcron' }),
      cell({ variant: 'floor', failure: 'boom' }),
    ]);
    expect(row?.throughputVsFloor).toBeNull();
    expect(row?.throughputVsPeer).toBeNull();
  });
});

describe('violations', () => {
  it('flags fleetcron duplicates, missed fires and inspect mismatches, not those of peers', () => {
    const out = violations(
      [
        cell({ account: { fires: 9, exactlyOnce: 7, duplicates: 1, missed: 1, unresolved: 0 } }),
        cell({ instances: 4, verified: '2 mismatches' }),
        cell({
          variant: 'peer',
          account: { fires: 9, exactlyOnce: 5, duplicates: 4, missed: 0, unresolved: 0 },
          verified: 'n/a',
        }),
      ],
      [fleetRow({ duplicates: 2, missed: 1 })],
    );
    expect(out).toEqual([
      'redis fleetcron n=2: 1 duplicate wins',
      'redis fleetcron n=2: 1 fires without a winner',
      'redis fleetcron n=4: inspect: 2 mismatches',
      'scale redis unbatched 10 jobs × 1 wakes: 2 duplicate runs',
      'scale redis unbatched 10 jobs × 1 wakes: 1 jobs never ran',
    ]);
  });

  it('flags cells that did not run and is empty for a clean run', () => {
    expect(violations([cell({ variant: 'floor', failure: 'no server' })], [])).toEqual([
      'redis floor n=2: did not run: no server',
    ]);
    expect(violations([cell({})], [fleetRow({ skippedUnavailable: 3 })])).toEqual([]);
  });
});

describe('markdown report', () => {
  it('shows peer duplicates in parentheses and fleetcron ones plainly', () => {
    const out = contentionTable([
      cell({ account: { fires: 1, exactlyOnce: 1, duplicates: 0, missed: 0, unresolved: 0 } }),
      cell({
        variant: 'peer',
        account: { fires: 9, exactlyOnce: 5, duplicates: 4, missed: 0, unresolved: 0 },
      }),
    ]);
    const [, , fleetcronRow, peerRow] = out.split('\n');
    expect(fleetcronRow).toContain('| redis | fleetcron | 2 | 1 000 | 500 | 2.00 |');
    expect(peerRow).toContain('| (4) |');
  });

  it('renders every section, the chart and the verdict', () => {
    const md = renderMarkdown(report([cell({})], [fleetRow({})]));
    for (const heading of [
      '## Machine',
      '## Contention',
      '## Ratios',
      '## Scheduler: many jobs',
      '## Scheduler: jobs due',
    ]) {
      expect(md).toContain(heading);
    }
    expect(md).toContain('![claims/s and p50 against instances](x.svg)');
    expect(md).toContain('**Once per fire held:**');
    expect(md).toContain('| CPUs | 2 × AMD EPYC |');
    expect(md).toContain('| redis | 7.0.15 | local | SET NX PX | redlock |');
  });

  it('puts failures first', () => {
    const md = renderMarkdown(report([], [], ['redis fleetcron n=2: 1 duplicate wins']));
    expect(md).toContain('**FAILED');
    expect(md).toContain('- redis fleetcron n=2: 1 duplicate wins');
  });
});
