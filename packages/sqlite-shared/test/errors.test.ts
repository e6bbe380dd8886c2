import { BackendUnavailableError, isFleetcronError } from '@fleetcron/core';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { unknownOperation } from '../src/executor.js';
import { type SqliteOperations, unavailable } from '../src/index.js';
import { resolveSource } from '../src/source.js';

const operations: { module: { url: string; exportName: string }; set: SqliteOperations } = {
  module: { url: import.meta.url, exportName: 'none' },
  set: { migrate: () => undefined, ops: {} },
};

describe('typed errors of the SQLite adapters', () => {
  it('a connection SQLite keeps out of WAL mode is INVALID_OPTION on database, naming the fix', () => {
    // A real connection whose answer to `journal_mode = WAL` is the one SQLite gives on a file
    // system without shared memory (not reproducible on this machine's local disk).
    const db = new Database(':memory:');
    const refusesWal = new Proxy(db, {
      get(target, key) {
        if (key === 'memory') return false;
        if (key === 'pragma') {
          return (source: string, options?: object) =>
            source === 'journal_mode = WAL' ? 'delete' : target.pragma(source, options);
        }
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    try {
      let thrown: unknown;
      try {
        resolveSource(refusesWal, {}, operations, 'sqlite');
      } catch (error) {
        thrown = error;
      }
      expect(isFleetcronError(thrown, 'INVALID_OPTION'), String(thrown)).toBe(true);
      expect((thrown as { field?: string }).field).toBe('database');
      expect((thrown as Error).message).toMatch(
        /WAL mode \(journal_mode stays delete\).*local file system/,
      );
    } finally {
      db.close();
    }
  });

  it('a driver failure carried from the worker names its SQLite code in the message', () => {
    const failure = { name: 'SqliteError', message: 'database is locked', code: 'SQLITE_BUSY' };
    const error = unavailable('sqlite', 'claim', failure);
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect(error.message).toBe(
      'sqlite backend unavailable during claim: SQLITE_BUSY: database is locked',
    );
    const typed = BackendUnavailableError.notSent('sqlite', 'claim');
    expect(unavailable('sqlite', 'claim', typed), 'a typed error passes through').toBe(typed);
  });

  it('an operation the adapter lacks fails closed as BACKEND_UNAVAILABLE naming it', async () => {
    const db = new Database(':memory:');
    try {
      const { executor } = resolveSource(db, {}, operations, 'sqlite');
      const error = await executor.run('claimEverything', {}).catch((e: unknown) => e);
      expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), String(error)).toBe(true);
      expect((error as Error).message).toBe(unknownOperation('sqlite', 'claimEverything').message);
    } finally {
      db.close();
    }
  });
});
