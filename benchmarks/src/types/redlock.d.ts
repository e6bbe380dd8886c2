// Minimal typings of redlock 4.2.0 (the package ships none): only what the peer uses.
declare module 'redlock' {
  import type { EventEmitter } from 'node:events';

  namespace Redlock {
    interface Options {
      driftFactor?: number;
      retryCount?: number;
      retryDelay?: number;
      retryJitter?: number;
    }
    interface Lock {
      resource: string | string[];
      value: string;
      expiration: number;
      unlock(): Promise<void>;
    }
  }

  class Redlock extends EventEmitter {
    constructor(clients: unknown[], options?: Redlock.Options);
    lock(resource: string | string[], ttl: number): Promise<Redlock.Lock>;
    unlock(lock: Redlock.Lock): Promise<void>;
    quit(): Promise<void>;
  }

  export = Redlock;
}
