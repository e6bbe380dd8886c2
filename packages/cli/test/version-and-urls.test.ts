import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACCEPTED_URL_FORMS, chooseBackend } from '../src/connect.js';
import { hasStackTrace, runFleetcron } from './built-bin.js';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

describe('fleetcron --version', () => {
  it('prints the version of @fleetcron/cli and exits 0 (-V too, and before any command)', async () => {
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+/);
    for (const args of [['--version'], ['-V'], ['jobs', '--version']]) {
      const run = await runFleetcron(args);
      expect(run.code, args.join(' ')).toBe(0);
      expect(run.stdout).toBe(`${manifest.version}\n`);
      expect(run.stderr).toBe('');
    }
  });

  it('is in the usage text', async () => {
    const run = await runFleetcron(['--help']);
    expect(run.stdout).toContain('-V, --version');
  });
});

describe('FLEETCRON_URL forms', () => {
  // Every scheme chooseBackend accepts, with the backend it picks.
  const accepted: Array<[string, string]> = [
    ['postgres://app@db:5432/app', 'postgres'],
    ['postgresql://app@db:5432/app', 'postgres'],
    ['redis://cache:6379/0', 'redis'],
    ['rediss://cache:6380/0', 'redis'],
    ['etcd://etcd:2379', 'etcd'],
    ['http://etcd:2379', 'etcd'],
    ['https://etcd:2379', 'etcd'],
    ['sqlite:///var/lib/app/fleet.db', 'sqlite'],
  ];

  it.each(accepted)('accepts %s (%s), and the bad-URL message names its form', (url, kind) => {
    expect(chooseBackend({}, { FLEETCRON_URL: url })).toEqual({ kind, url });
    const scheme = url.slice(0, url.indexOf('://') + 3);
    expect(ACCEPTED_URL_FORMS).toContain(scheme);
  });

  it('an unknown scheme exits 2 listing every accepted form, http://host:port and sqlite: included', async () => {
    const run = await runFleetcron(['jobs'], { FLEETCRON_URL: 'mysql://db/x' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('has no known scheme');
    for (const [url] of accepted)
      expect(run.stderr).toContain(url.slice(0, url.indexOf('://') + 3));
    expect(run.stderr).toContain('http://host:port');
    expect(run.stderr).toContain('sqlite:///absolute/path.db, sqlite:relative/path.db');
    expect(hasStackTrace(run.stderr)).toBe(false);
  });
});
