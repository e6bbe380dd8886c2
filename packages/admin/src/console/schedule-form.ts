/// <reference lib="dom" />
import type { ConsoleDom, Json } from './dom.js';

/** An error to show on the form: the API's `{ code, message, field? }`, or one found locally. */
export interface FormError {
  message: string;
  field?: string | undefined;
  code?: string | undefined;
}

/** Options of `scheduleForm`. */
export interface ScheduleFormOptions {
  /** The schedule to edit (as `GET api/schedules/:id` answers it), `null` to create one. */
  schedule: Json | null;
  /** Handler names to offer (those of the stored schedules): a `<datalist>`, not a limit. */
  handlers: string[];
  /**
   * Sends the body the form built (`POST api/schedules`, or the fields of an update); a thrown
   * error with `field` is shown next to that field, anything else above the buttons.
   */
  submit(body: Json): Promise<void>;
  /**
   * Builds the form again from the stored schedule: the "Discard changes" button, and "Reload"
   * shown with a conflict (`SCHEDULE_CONFLICT`).
   */
  reload(): void;
}

/** A form on the page: its element, and where its errors go. */
export interface ScheduleFormHandle {
  element: HTMLElement;
  /** Shows `error` next to the field it names (or the nearest one), else above the buttons. */
  showError(error: FormError): void;
  clearErrors(): void;
}

/**
 * The create / edit form of a stored schedule (runs in the browser; serialized with
 * `toString()`, see client.ts). It builds the JSON body the API takes, checks locally only what
 * the API cannot see (JSON that does not parse, a time that is not ISO 8601) and leaves every
 * other check to the API: its typed error names the field (`trigger.expression`,
 * `options.retry.attempts`), and the form shows the message under that field. Self-contained
 * apart from its argument.
 */
export function consoleScheduleForm(dom: ConsoleDom) {
  type Json = Record<string, unknown>;
  const { h } = dom;

  /** The job options the form offers, as the CLI's `--options` takes them. */
  const OPTION_FIELDS: Array<{ key: string; label: string; hint: string; kind: string }> = [
    { key: 'leaseMs', label: 'Lease (ms)', hint: 'handler default when empty', kind: 'number' },
    { key: 'timeoutMs', label: 'Timeout (ms)', hint: 'time limit of one attempt', kind: 'number' },
    { key: 'overlap', label: 'Overlap', hint: '', kind: 'overlap' },
    {
      key: 'catchUp',
      label: 'Catch-up',
      hint: 'skip, latest, or JSON such as {"max": 3, "within": 3600000}',
      kind: 'catchUp',
    },
    {
      key: 'retry',
      label: 'Retry (JSON)',
      hint: '{"attempts": 3, "backoff": {"initialMs": 1000}}',
      kind: 'json',
    },
    {
      key: 'startAt',
      label: 'Start at',
      hint: 'ISO 8601, e.g. 2027-01-01T00:00:00Z',
      kind: 'time',
    },
    { key: 'endAt', label: 'End at', hint: 'ISO 8601; not before the start', kind: 'time' },
    { key: 'note', label: 'Note', hint: 'what the schedule is for', kind: 'text' },
  ];

  /** A parse failure found before sending: shown like an API error on `field`. */
  function localError(field: string, message: string): Error & FormError {
    return Object.assign(new Error(message), { field, code: 'INVALID_INPUT' });
  }

  /** `''` → undefined; a decimal number → the number; other text is sent as is (the API names it). */
  function numberOrText(value: string): number | string | undefined {
    const text = value.trim();
    if (text === '') return undefined;
    return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
  }

  function parseJson(field: string, text: string, example: string): unknown {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw localError(
        field,
        `${field}: must be JSON, e.g. ${example} (${(error as Error).message}).`,
      );
    }
  }

  function parseTime(field: string, text: string): number | undefined {
    if (text.trim() === '') return undefined;
    const at = Date.parse(text.trim());
    if (!Number.isFinite(at)) {
      throw localError(
        field,
        `${field}: must be an ISO 8601 time such as 2027-01-01T00:00:00Z, got ${JSON.stringify(text)}.`,
      );
    }
    return at;
  }

  function scheduleForm(options: ScheduleFormOptions): ScheduleFormHandle {
    const current = options.schedule;
    const editing = current !== null;
    const trigger = (current?.trigger ?? { kind: 'cron', expression: '', tz: 'UTC' }) as Json;
    const stored = (current?.options ?? {}) as Json;
    /** Every field's wrapper by the API field it shows errors of. */
    const fields = new Map<string, HTMLElement>();

    function field(
      key: string,
      label: string,
      control: HTMLElement,
      hint = '',
      extra: HTMLElement | null = null,
    ): HTMLElement {
      const id = control.id;
      control.setAttribute('aria-describedby', `${id}-error`);
      const wrapper = h(
        'div',
        { class: 'field', 'data-field': key },
        h('label', { for: id }, label),
        control,
        extra,
        hint ? h('span', { class: 'hint' }, hint) : null,
        h('span', { class: 'field-error', id: `${id}-error` }),
      );
      fields.set(key, wrapper);
      return wrapper;
    }

    const input = (id: string, value: unknown, attrs: Json = {}): HTMLInputElement =>
      h('input', {
        id,
        name: id,
        type: 'text',
        value: value === undefined || value === null ? '' : String(value),
        autocomplete: 'off',
        ...attrs,
      }) as HTMLInputElement;
    const iso = (at: unknown): string => (typeof at === 'number' ? new Date(at).toISOString() : '');

    const id = input('sf-id', current?.id ?? '', editing ? { readonly: true } : {});
    const handler = input('sf-handler', current?.handler ?? '', { list: 'sf-handlers' });
    const kind = h(
      'select',
      { id: 'sf-kind', name: 'sf-kind' },
      ...['cron', 'every', 'at'].map((k) =>
        h('option', { value: k, selected: trigger.kind === k }, k),
      ),
    ) as HTMLSelectElement;
    const expression = input('sf-expression', trigger.kind === 'cron' ? trigger.expression : '', {
      placeholder: '0 3 * * *',
    });
    const zone = input('sf-tz', trigger.kind === 'cron' ? trigger.tz : 'UTC', { list: 'sf-zones' });
    const everyMs = input('sf-ms', trigger.kind === 'every' ? trigger.ms : '', {
      inputmode: 'numeric',
      placeholder: '60000',
    });
    const at = input('sf-at', trigger.kind === 'at' ? iso(trigger.at) : '', {
      placeholder: '2027-01-01T00:00:00Z',
    });
    const data = h('textarea', {
      id: 'sf-data',
      name: 'sf-data',
      rows: '4',
    }) as HTMLTextAreaElement;
    data.value = current ? JSON.stringify(current.data ?? null, null, 2) : 'null';
    const enabled = h('input', {
      id: 'sf-enabled',
      name: 'sf-enabled',
      type: 'checkbox',
      checked: current ? current.enabled === true : true,
    }) as HTMLInputElement;

    const optionInputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
    const optionFields = OPTION_FIELDS.map((o) => {
      const value = stored[o.key];
      let control: HTMLInputElement | HTMLSelectElement;
      if (o.kind === 'overlap') {
        control = h(
          'select',
          { id: `sf-${o.key}`, name: `sf-${o.key}` },
          ...[
            ['', 'handler default'],
            ['skip', 'skip (a fire while a run is on is skipped)'],
            ['allow', 'allow'],
          ].map(([v, text]) => h('option', { value: v, selected: (value ?? '') === v }, text)),
        ) as HTMLSelectElement;
      } else {
        const shown =
          value === undefined
            ? ''
            : o.kind === 'time'
              ? iso(value)
              : typeof value === 'object' || (o.kind === 'catchUp' && typeof value !== 'string')
                ? JSON.stringify(value)
                : String(value);
        control = input(`sf-${o.key}`, shown, o.kind === 'number' ? { inputmode: 'numeric' } : {});
      }
      optionInputs.set(o.key, control);
      return field(`options.${o.key}`, o.label, control, o.hint);
    });

    const cronRows = [
      field('trigger.expression', 'Cron expression', expression, '5 fields, or 6 with seconds'),
      field('trigger.tz', 'Zone', zone, 'IANA zone, e.g. Europe/Berlin'),
    ];
    const everyRow = field('trigger.ms', 'Every (ms)', everyMs);
    const atRow = field('trigger.at', 'At', at, 'ISO 8601, e.g. 2027-01-01T00:00:00Z');
    function showTriggerFields(): void {
      for (const row of cronRows) row.hidden = kind.value !== 'cron';
      everyRow.hidden = kind.value !== 'every';
      atRow.hidden = kind.value !== 'at';
    }
    kind.addEventListener('change', showTriggerFields);
    showTriggerFields();

    const formError = h('p', { class: 'form-error', id: 'sf-error', role: 'alert' });
    const submit = h(
      'button',
      { type: 'submit', class: 'primary', id: 'sf-submit' },
      editing ? 'Save changes' : 'Create schedule',
    ) as HTMLButtonElement;
    const zones = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf;

    /** The API body the form holds; throws a local error for JSON or times that do not parse. */
    function read(): Json {
      const spec: Json =
        kind.value === 'cron'
          ? { kind: 'cron', expression: expression.value.trim(), tz: zone.value.trim() || 'UTC' }
          : kind.value === 'every'
            ? { kind: 'every', ms: numberOrText(everyMs.value) ?? '' }
            : { kind: 'at', at: at.value.trim() };
      const body: Json = {
        handler: handler.value.trim(),
        trigger: spec,
        data: parseJson('data', data.value.trim() === '' ? 'null' : data.value, '{"customer": 42}'),
        enabled: enabled.checked,
      };
      if (!editing && id.value.trim() !== '') body.id = id.value.trim();
      const chosen: Json = {};
      for (const o of OPTION_FIELDS) {
        const text = (optionInputs.get(o.key) as HTMLInputElement).value;
        const name = `options.${o.key}`;
        let value: unknown;
        if (o.kind === 'number') value = numberOrText(text);
        else if (o.kind === 'time') value = parseTime(name, text);
        else if (o.kind === 'json')
          value = text.trim() === '' ? undefined : parseJson(name, text, o.hint);
        else if (o.kind === 'catchUp') {
          const t = text.trim();
          value =
            t === '' ? undefined : t === 'skip' || t === 'latest' ? t : parseJson(name, t, o.hint);
        } else value = text.trim() === '' ? undefined : text.trim();
        // An update merges options key by key: null puts one back to the handler's default.
        if (value !== undefined) chosen[o.key] = value;
        else if (editing) chosen[o.key] = null;
      }
      body.options = chosen;
      return body;
    }

    function clearErrors(): void {
      formError.replaceChildren();
      for (const wrapper of fields.values()) {
        wrapper.classList.remove('invalid');
        (wrapper.querySelector('.field-error') as HTMLElement).textContent = '';
        wrapper.querySelector('[aria-invalid]')?.removeAttribute('aria-invalid');
      }
    }

    /** The wrapper of `name` or of its nearest parent (`options.retry.attempts` → `options.retry`). */
    function fieldOf(name: string | undefined): HTMLElement | null {
      let key = name ?? '';
      while (key !== '') {
        const wrapper = fields.get(key);
        if (wrapper && !wrapper.hidden) return wrapper;
        const cut = Math.max(key.lastIndexOf('.'), key.lastIndexOf('['));
        key = cut > 0 ? key.slice(0, cut) : '';
      }
      return null;
    }

    function showError(error: FormError): void {
      const wrapper = fieldOf(error.field);
      if (!wrapper) {
        formError.replaceChildren(h('span', null, error.message));
        if (error.code === 'SCHEDULE_CONFLICT') {
          formError.append(
            ' ',
            h(
              'button',
              { type: 'button', id: 'sf-reload', onclick: () => options.reload() },
              'Reload (drops your edits)',
            ),
          );
        }
        return;
      }
      wrapper.classList.add('invalid');
      (wrapper.querySelector('.field-error') as HTMLElement).textContent = dom.visible(
        error.message,
      );
      const control = wrapper.querySelector('input, select, textarea') as HTMLElement | null;
      control?.setAttribute('aria-invalid', 'true');
      control?.focus();
    }

    const element = h(
      'form',
      {
        class: 'schedule-form',
        id: 'schedule-form',
        novalidate: true,
        onsubmit: async (event: Event) => {
          event.preventDefault();
          clearErrors();
          let body: Json;
          try {
            body = read();
          } catch (error) {
            showError(error as FormError);
            return;
          }
          submit.disabled = true;
          try {
            await options.submit(body);
          } catch (error) {
            showError(error as FormError);
          } finally {
            submit.disabled = false;
          }
        },
      },
      h(
        'datalist',
        { id: 'sf-handlers' },
        ...options.handlers.map((name) => h('option', { value: name })),
      ),
      h(
        'datalist',
        { id: 'sf-zones' },
        ...(zones?.('timeZone') ?? []).map((z) => h('option', { value: z })),
      ),
      editing
        ? h(
            'p',
            { class: 'muted', id: 'sf-version' },
            `Editing version ${String(current.version)}: saving is refused if it changed since.`,
          )
        : null,
      field('id', 'Id', id, editing ? 'an id never changes' : 'optional; a random UUID when empty'),
      field('handler', 'Handler', handler, 'the name the instances register, e.g. reports.daily'),
      field('trigger', 'Trigger', kind),
      ...cronRows,
      everyRow,
      atRow,
      field('data', 'Data (JSON)', data, 'handed to the run as ctx.schedule.data; at most 64 KiB'),
      field('enabled', 'Enabled', enabled),
      h('fieldset', null, h('legend', null, 'Job options'), ...optionFields),
      formError,
      h(
        'div',
        { class: 'actions' },
        submit,
        editing
          ? h(
              'button',
              { type: 'button', id: 'sf-discard', onclick: () => options.reload() },
              'Discard changes',
            )
          : h('a', { href: '#/schedules' }, 'Cancel'),
      ),
    );
    return { element, showError, clearErrors };
  }

  return { scheduleForm };
}

/** What {@link consoleScheduleForm} returns. */
export type ConsoleScheduleForm = ReturnType<typeof consoleScheduleForm>;
