// The display while `lease` waits, on stderr. On a terminal: one block redrawn in place every
// second (the waiting time moves) and on every change. Otherwise (CI logs, pipes): the block is
// printed again only when something but the waiting time changes.
import type { LeaseRequestObject } from '../api/index.js';
import { progressLines, progressSignature, repaint } from './format/progress.js';
import type { WorkerDisplay } from './format/requests.js';
import type { CliIO } from './io.js';

export class ProgressView {
  private drawnLines = 0;
  private latest: LeaseRequestObject | undefined;
  private printedSignature: string | undefined;
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly io: CliIO,
    private readonly worker: WorkerDisplay,
  ) {}

  start(): void {
    if (!this.io.stderrIsTTY) return;
    this.ticker = setInterval(() => this.draw(), 1000);
    this.ticker.unref();
  }

  update(request: LeaseRequestObject): void {
    this.latest = request;
    if (this.io.stderrIsTTY) {
      this.draw();
      return;
    }
    const signature = progressSignature(request);
    if (signature === this.printedSignature) return;
    this.printedSignature = signature;
    for (const line of this.lines(request)) this.io.err(line);
  }

  /** Stops redrawing and erases the live block, so that the outcome stands alone. */
  finish(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    if (this.io.stderrIsTTY && this.drawnLines > 0) this.io.writeErr(repaint(this.drawnLines, []));
    this.drawnLines = 0;
  }

  private lines(request: LeaseRequestObject): string[] {
    return progressLines(request, { now: this.io.now(), worker: this.worker });
  }

  private draw(): void {
    if (!this.latest) return;
    const lines = this.lines(this.latest);
    this.io.writeErr(repaint(this.drawnLines, lines, this.io.columns));
    this.drawnLines = lines.length;
  }
}
