// Durations on the command line: 90s, 5m, 1h, 1h30m, or plain seconds (300), as kubectl takes them.

const DURATION = /^(?:(\d{1,7})h)?(?:(\d{1,7})m)?(?:(\d{1,9})s)?$/;

/** Whole seconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d{1,9}$/.test(trimmed)) return Number(trimmed);
  const match = DURATION.exec(trimmed);
  if (!match || trimmed.length === 0) return undefined;
  const [, hours, minutes, seconds] = match;
  return Number(hours ?? 0) * 3600 + Number(minutes ?? 0) * 60 + Number(seconds ?? 0);
}

/** 3600 → "1h", 90 → "1m30s", 0 → "0s": the shortest form parseDuration reads back. */
export function formatDuration(totalSeconds: number): string {
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  const parts = [
    hours > 0 ? `${hours}h` : '',
    minutes > 0 ? `${minutes}m` : '',
    seconds > 0 ? `${seconds}s` : '',
  ].join('');
  return parts.length > 0 ? parts : '0s';
}
