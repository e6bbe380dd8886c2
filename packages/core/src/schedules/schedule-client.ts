import { randomUUID } from 'node:crypto';
import { InvalidOptionError } from '../errors.js';
import type { Store } from '../store.js';
import type { ScheduleOptions, StoredSchedule } from './schedule.js';
import { UnknownScheduleError } from './schedule-errors.js';
import {
  assertExpectedVersion,
  assertWriter,
  hasSchedules,
  type SchedulePage,
  type ScheduleQuery,
  type ScheduleStore,
} from './schedule-store.js';
import {
  checkScheduleId,
  normalizeScheduleDefinition,
  type ScheduleInput,
  type TriggerSpecInput,
} from './validate-schedule.js';

/** What `FleetClient.createSchedule` takes: a definition and, optionally, the id to give it. */
export interface CreateScheduleInput extends ScheduleInput {
  /** The id; default a random UUID. */
  id?: string;
}

/**
 * A change to a stored schedule: the fields given replace the stored ones; `options` are merged
 * key by key (a key set to `null` is removed, back to the handler's default).
 */
export interface SchedulePatch {
  handler?: string;
  trigger?: TriggerSpecInput;
  data?: ScheduleInput['data'];
  enabled?: boolean;
  options?: { [K in keyof ScheduleOptions]?: ScheduleOptions[K] | null };
}

/** Who changes a schedule, and why; `expectedVersion` as read (optional where marked). */
export interface ScheduleActor {
  /** Who asks: stored as `updatedBy` and in the audit log (at most 200 characters). */
  by: string;
  /** Why (at most 1,000 characters): kept in the audit log entry of the change. */
  note?: string | null;
  /** The version read before the change: a stale one fails with `SCHEDULE_CONFLICT`. */
  expectedVersion?: number;
}

const PATCH_KEYS = ['handler', 'trigger', 'data', 'enabled', 'options'];

/**
 * The stored-schedule operations of `FleetClient`, over any store with them. Every write is
 * checked in full before it reaches the store (a typed error naming the field stores nothing)
 * and is versioned: `update` needs the version read, `enable`/`disable`/`remove` take one or
 * use the current one.
 */
export class ScheduleClient {
  private readonly store: Store & ScheduleStore;

  /** @throws InvalidOptionError (field `store`) when the store has no stored schedules. */
  constructor(store: Store) {
    if (!hasSchedules(store)) {
      throw new InvalidOptionError(
        'store',
        `the ${store.backend} store keeps no stored schedules (createSchedule, replaceSchedule, removeSchedule, getSchedule, listSchedules); use a built-in store (MemoryStore, PostgresStore, RedisStore, EtcdStore, SqliteStore) of this version.`,
      );
    }
    this.store = store;
  }

  async create(input: CreateScheduleInput, actor: ScheduleActor): Promise<StoredSchedule> {
    const by = assertWriter(actor);
    if (typeof input !== 'object' || input === null) {
      throw new InvalidOptionError('schedule', 'must be an object { id?, handler, trigger, ... }.');
    }
    const { id = randomUUID(), ...rest } = input;
    checkScheduleId(id);
    return this.store.createSchedule(id, normalizeScheduleDefinition(rest), noted(by, actor));
  }

  async update(id: string, patch: SchedulePatch, actor: ScheduleActor): Promise<StoredSchedule> {
    const by = assertWriter(actor);
    assertExpectedVersion(actor.expectedVersion);
    checkScheduleId(id);
    if (typeof patch !== 'object' || patch === null) {
      throw new InvalidOptionError('patch', 'must be an object of the fields to change.');
    }
    for (const key of Object.keys(patch)) {
      if (!PATCH_KEYS.includes(key)) {
        throw new InvalidOptionError(
          key,
          `is not a field of a schedule; known: ${PATCH_KEYS.join(', ')}.`,
        );
      }
    }
    const current = await this.current(id);
    const definition = normalizeScheduleDefinition({
      handler: patch.handler ?? current.handler,
      trigger: patch.trigger ?? current.trigger,
      data: patch.data === undefined ? current.data : patch.data,
      enabled: patch.enabled ?? current.enabled,
      options: mergeOptions(current.options, patch.options),
    });
    return this.store.replaceSchedule(id, definition, {
      ...noted(by, actor),
      expectedVersion: actor.expectedVersion,
    });
  }

  async setEnabled(id: string, enabled: boolean, actor: ScheduleActor): Promise<StoredSchedule> {
    const by = assertWriter(actor);
    checkScheduleId(id);
    const current = await this.current(id);
    const expectedVersion = actor.expectedVersion ?? current.version;
    assertExpectedVersion(expectedVersion);
    const { handler, trigger, data, options } = current;
    return this.store.replaceSchedule(
      id,
      { handler, trigger, data, enabled, options },
      {
        ...noted(by, actor),
        expectedVersion,
        action: enabled ? 'schedule.enable' : 'schedule.disable',
      },
    );
  }

  async remove(id: string, actor: ScheduleActor): Promise<StoredSchedule> {
    const by = assertWriter(actor);
    checkScheduleId(id);
    const expectedVersion = actor.expectedVersion ?? null;
    if (expectedVersion !== null) assertExpectedVersion(expectedVersion);
    return this.store.removeSchedule(id, { ...noted(by, actor), expectedVersion });
  }

  get(id: string): Promise<StoredSchedule | null> {
    checkScheduleId(id);
    return this.store.getSchedule(id);
  }

  list(query?: ScheduleQuery): Promise<SchedulePage> {
    return this.store.listSchedules(query);
  }

  private async current(id: string): Promise<StoredSchedule> {
    const current = await this.store.getSchedule(id);
    if (!current) throw new UnknownScheduleError(id);
    return current;
  }
}

/** The write's `by`, with the actor's note when there is one. */
function noted(by: string, actor: ScheduleActor): { by: string; note?: string } {
  return typeof actor.note === 'string' && actor.note !== '' ? { by, note: actor.note } : { by };
}

function mergeOptions(
  current: ScheduleOptions,
  patch: SchedulePatch['options'] | undefined,
): ScheduleOptions {
  if (patch === undefined) return current;
  if (typeof patch !== 'object' || patch === null) {
    throw new InvalidOptionError('options', 'must be an object of the options to change.');
  }
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged as ScheduleOptions;
}
