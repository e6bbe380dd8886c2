import cliProgress from 'cli-progress';

/**
 * Progress of a run: a cli-progress bar on a terminal, one plain line per step otherwise (CI has
 * no TTY, and a redrawn bar would fill its log with control characters).
 */
export class Progress {
  private done = 0;
  private readonly bar: cliProgress.SingleBar | null;

  constructor(
    private total: number,
    tty: boolean,
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  ) {
    this.bar = tty
      ? new cliProgress.SingleBar(
          {
            format: ' {bar} {value}/{total} | {duration_formatted} | {label}',
            hideCursor: true,
            clearOnComplete: false,
          },
          cliProgress.Presets.shades_classic,
        )
      : null;
    this.bar?.start(total, 0, { label: 'starting' });
  }

  /** Steps done so far. */
  get count(): number {
    return this.done;
  }

  /** Announces what is starting (no step counted). */
  status(label: string): void {
    if (this.bar) this.bar.update(this.done, { label });
    else this.write(`      ${label}`);
  }

  /** Counts one step done, with what it was and its headline figure. */
  step(label: string, detail = ''): void {
    this.done = Math.min(this.total, this.done + 1);
    const text = detail ? `${label}: ${detail}` : label;
    if (this.bar) this.bar.update(this.done, { label: text });
    else
      this.write(
        `[${String(this.done).padStart(String(this.total).length)}/${this.total}] ${text}`,
      );
  }

  /** Skips `n` steps that will not run (a backend that did not start). */
  skip(n: number): void {
    this.done = Math.min(this.total, this.done + n);
    this.bar?.update(this.done);
  }

  /** Prints a line above the bar (or plainly). */
  log(line: string): void {
    if (this.bar) {
      this.bar.stop();
      this.write(line);
      this.bar.start(this.total, this.done, { label: line.slice(0, 60) });
    } else this.write(line);
  }

  stop(): void {
    this.bar?.stop();
  }
}
