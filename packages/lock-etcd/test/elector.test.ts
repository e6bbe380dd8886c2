import { isFleetcronError } from '@fleetcron/core';
import { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import { EtcdElector } from '../src/index.js';

// Construction only: no server is contacted (the conformance file runs the elector on one).
const client = new Etcd3({ hosts: '127.0.0.1:1' });
afterAll(() => client.close());

function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return null;
}

describe('EtcdElector input', () => {
  it('bad options throw InvalidOptionError naming the field, at construction', () => {
    for (const [options, field] of [
      [{ prefix: '' }, 'prefix'],
      [{ requestTimeoutMs: 0 }, 'requestTimeoutMs'],
    ] as const) {
      const error = caught(() => new EtcdElector(client, options));
      expect(isFleetcronError(error, 'INVALID_OPTION'), String(error)).toBe(true);
      expect((error as { field?: string }).field).toBe(field);
    }
  });

  it('TTLs below 2 s or not whole seconds are refused before anything is sent', async () => {
    const elector = new EtcdElector(client, { prefix: 'x/' });
    const short = await elector.campaign({ election: 'e', id: 'a', ttlMs: 1500 }).catch((e) => e);
    expect(isFleetcronError(short, 'LEASE_TOO_SHORT'), String(short)).toBe(true);
    const partial = await elector.campaign({ election: 'e', id: 'a', ttlMs: 2500 }).catch((e) => e);
    expect(isFleetcronError(partial, 'INVALID_OPTION'), String(partial)).toBe(true);
    expect(String(partial)).toMatch(/multiple of 1000, e.g. 3000/);
    await elector.close();
  });
});
