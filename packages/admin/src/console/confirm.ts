/// <reference lib="dom" />
import type { ConsoleDom } from './dom.js';

/**
 * The console's confirmation dialog (runs in the browser; serialized with `toString()`, see
 * client.ts): returns `confirmAction`, which every mutation that asks first (pause, resume, run
 * now, deleting a schedule) awaits. Self-contained apart from its argument.
 */
export function consoleConfirm(dom: ConsoleDom) {
  const { h } = dom;
  const root = document.getElementById('app') as HTMLElement;

  /**
   * Opens a modal confirmation with an optional note (at most 1 000 characters, sent with the
   * mutation for the audit line); resolves the note (`''` for none) on confirm, `null` when Esc
   * or Cancel dismiss it. With `submit` (run now) it also has a JSON data field: confirm calls
   * `submit(note, dataText)`, and a string it resolves is that field's error (the dialog stays
   * open, the field marked invalid); `null` closes it.
   */
  function confirmAction(
    question: string,
    confirmLabel: string,
    submit?: (note: string, data: string) => Promise<string | null>,
  ): Promise<string | null> {
    return new Promise((resolve) => {
      const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-title' });
      // Give the focus back to the button that opened the dialog (or its re-rendered twin).
      const opener = document.activeElement as HTMLElement | null;
      const openerKey = opener?.getAttribute('data-key') ?? null;
      const note = h('textarea', {
        id: 'confirm-note',
        name: 'note',
        rows: '2',
        maxlength: '1000',
      }) as HTMLTextAreaElement;
      const data = submit
        ? (h('textarea', {
            id: 'confirm-data',
            name: 'data',
            rows: '4',
            spellcheck: 'false',
            placeholder: '{"month": "2026-11"}',
            'aria-describedby': 'confirm-data-error',
          }) as HTMLTextAreaElement)
        : null;
      const dataError = h('span', { class: 'field-error', id: 'confirm-data-error' });
      const done = (ok: boolean): void => {
        dialog.remove();
        const target = opener?.isConnected
          ? opener
          : openerKey
            ? (root.querySelector(`[data-key="${CSS.escape(openerKey)}"]`) as HTMLElement | null)
            : null;
        target?.focus();
        resolve(ok ? note.value.trim() : null);
      };
      let busy = false;
      const confirm = async (): Promise<void> => {
        if (!submit || !data) return done(true);
        if (busy) return;
        busy = true;
        dataError.textContent = '';
        data.removeAttribute('aria-invalid');
        const problem = await submit(note.value.trim(), data.value);
        busy = false;
        if (problem === null) return done(true);
        dataError.textContent = dom.visible(problem);
        data.setAttribute('aria-invalid', 'true');
        data.focus();
      };
      dialog.append(
        h('h2', { id: 'confirm-title' }, question),
        h('label', { for: 'confirm-note' }, 'Note (optional, for the audit log)'),
        note,
        ...(data
          ? [
              h(
                'label',
                { for: 'confirm-data' },
                'Data (optional JSON, the run sees it as ctx.request.data)',
              ),
              data,
              dataError,
            ]
          : []),
        h(
          'div',
          { class: 'dialog-buttons' },
          h('button', { type: 'button', class: 'secondary', onclick: () => done(false) }, 'Cancel'),
          h(
            'button',
            { type: 'button', class: 'primary', 'data-confirm': '', onclick: () => confirm() },
            confirmLabel,
          ),
        ),
      );
      dialog.addEventListener('cancel', (event) => {
        event.preventDefault();
        done(false);
      });
      document.body.append(dialog);
      (dialog as HTMLDialogElement).showModal();
      (dialog.querySelector('[data-confirm]') as HTMLElement).focus();
    });
  }

  return confirmAction;
}

/** What {@link consoleConfirm} returns: `(question, confirmLabel, submit?) => note | null`. */
export type ConfirmAction = ReturnType<typeof consoleConfirm>;
