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
   * or Cancel dismiss it.
   */
  function confirmAction(question: string, confirmLabel: string): Promise<string | null> {
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
      dialog.append(
        h('h2', { id: 'confirm-title' }, question),
        h('label', { for: 'confirm-note' }, 'Note (optional, for the audit log)'),
        note,
        h(
          'div',
          { class: 'dialog-buttons' },
          h('button', { type: 'button', class: 'secondary', onclick: () => done(false) }, 'Cancel'),
          h(
            'button',
            { type: 'button', class: 'primary', 'data-confirm': '', onclick: () => done(true) },
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

/** What {@link consoleConfirm} returns: `(question, confirmLabel) => note | null`. */
export type ConfirmAction = ReturnType<typeof consoleConfirm>;
