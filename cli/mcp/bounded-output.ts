// One stream of a tool's output as the MCP server answers it: at most `limit` bytes, the first
// and the last half of it, and a note of how much was cut from the middle. A coding agent reads
// the start (what ran) and the end (how it ended); the whole output is never held in memory.
export const MCP_OUTPUT_LIMIT_BYTES = 64 * 1024;

export class BoundedOutput {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;

  constructor(private readonly limit = MCP_OUTPUT_LIMIT_BYTES) {}

  append(text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    this.total += bytes.length;
    const headRoom = Math.ceil(this.limit / 2) - this.headBytes;
    const toHead = Math.max(0, Math.min(headRoom, bytes.length));
    if (toHead > 0) {
      this.head.push(bytes.subarray(0, toHead));
      this.headBytes += toHead;
    }
    if (toHead === bytes.length) return;
    this.tail.push(bytes.subarray(toHead));
    this.tailBytes += bytes.length - toHead;
    const keep = Math.floor(this.limit / 2);
    // Drop whole chunks from the front while the rest still holds the last `keep` bytes.
    while (this.tail.length > 1 && this.tailBytes - (this.tail[0]?.length ?? 0) >= keep) {
      this.tailBytes -= this.tail.shift()?.length ?? 0;
    }
  }

  /** Bytes left out of text(). */
  get cutBytes(): number {
    return Math.max(0, this.total - this.limit);
  }

  get totalBytes(): number {
    return this.total;
  }

  /** The output kept, with a note in place of what was cut. */
  text(stream: string): string {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    if (this.total <= this.limit) return Buffer.concat([head, tail]).toString('utf8');
    const kept = tail.subarray(tail.length - Math.floor(this.limit / 2));
    return (
      head.toString('utf8') +
      `\n[simlock: ${this.cutBytes} of ${this.total} bytes of ${stream} cut here]\n` +
      kept.toString('utf8')
    );
  }
}
