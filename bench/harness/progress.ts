// What a benchmark tells the person running it while it runs: progress lines on stderr (stdout
// is kept for the figures), and durations as they are printed.

/** A progress line on stderr, with the time of day. */
export function log(message: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
