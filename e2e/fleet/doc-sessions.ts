// The terminal sessions the docs show, and how a real run is compared with them. A session is a
// fenced block without a language whose lines begin with `$ `: each `$ command` line is what a
// person types, the lines under it (to the next `$ `) what the terminal then shows. A line `…`
// stands for any number of lines the docs leave out. Names, device ids and reasons are compared
// as they are; what differs from run to run (times, ages, ports, generated names, a Node path) is
// put in a placeholder on both sides first, and column padding is collapsed, as an age one digit
// longer widens a kubectl column; Events of the same second compare in any order.

export interface FencedBlock {
  /** The info string after the opening fence: `sh`, `json`, or empty. */
  info: string;
  lines: string[];
  /** 1-based line of the first line inside the fence. */
  line: number;
}

export interface DocCommand {
  command: string;
  expected: string[];
  /** 1-based line of the `$ command` line in the file. */
  line: number;
}

/** Every fenced block of a Markdown file. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let open: FencedBlock | undefined;
  markdown.split('\n').forEach((text, index) => {
    const fence = /^```(.*)$/.exec(text);
    if (fence && !open) open = { info: (fence[1] ?? '').trim(), lines: [], line: index + 2 };
    else if (fence && open) {
      blocks.push(open);
      open = undefined;
    } else open?.lines.push(text);
  });
  return blocks;
}

/** The block's commands and what each shows, if it is a session; undefined otherwise. */
export function sessionOf(block: FencedBlock): DocCommand[] | undefined {
  const first = block.lines.find((line) => line.trim() !== '');
  if (block.info !== '' || !first?.startsWith('$ ')) return undefined;
  const commands: DocCommand[] = [];
  block.lines.forEach((text, index) => {
    if (text.startsWith('$ '))
      commands.push({ command: text.slice(2), expected: [], line: block.line + index });
    else commands.at(-1)?.expected.push(text);
  });
  for (const command of commands) {
    while (command.expected.at(-1)?.trim() === '') command.expected.pop();
  }
  return commands;
}

/** The elision: any number of lines. */
export const ELISION = /^\s*(…|\.\.\.)\s*$/;

/**
 * Progress lines a lease prints on a pipe for phases that may pass before it looks (`pending`,
 * `dispatched to`): a run shows them or not, so they are left out of what a run showed, and the
 * docs do not show them (a terminal erases them anyway).
 */
const TRANSIENT = /^Request \S+: (pending|dispatched to \S+), waiting <d>$/;

const RULES: [RegExp, string][] = [
  [/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>'],
  [/\b(https?:\/\/(?:127\.0\.0\.1|localhost)):\d+/g, '$1:<port>'],
  [/\bkey=[\w-]+/g, 'key=<key>'],
  [/\blease-[a-z0-9]{5}\b/g, 'lease-<id>'],
  // A device the agent made: simlock-<model>-<6 hex> (agent/granter.ts deviceName).
  [/\b(simlock-[a-z0-9-]+)-[0-9a-f]{6}\b/g, '$1-<id>'],
  [/\bv\d+\.\d+\.\d+\b/g, 'v<version>'],
  [/\(\/[^()\s]*\/node\)/g, '(<node>)'],
  // Ages, waits and renewals: 4s, 59m, 1h30m, 250ms.
  [/(?<![\w.-])\d+(?:ms|[smhd])(?:\d+[smh])*(?!\w)/g, '<d>'],
  // IDLE, the last column of `list --leases`: `busy` until the exec proxy writes an exec's end
  // (up to its 45 s horizon after a quick exec), then the time since: which one a row shows
  // depends on how long the typing took, as any duration does.
  [/ {2,}busy$/, '  <d>'],
  [/(\S) {2,}/g, '$1  '],
];

export function normalise(line: string): string {
  let text = line.trimEnd();
  for (const [pattern, replacement] of RULES) text = text.replace(pattern, replacement);
  return text;
}

/** A row of `kubectl describe`'s Events table. */
const EVENT_ROW = /^\s+(Normal|Warning)\s/;

/**
 * kubectl describe sorts Events by their time, which has whole seconds, and leaves those of the
 * same second in any order (Granted and Extended often are): a run of rows compares as a set.
 */
function sortEventRows(lines: string[]): string[] {
  const sorted: string[] = [];
  let run: string[] = [];
  for (const line of [...lines, '']) {
    if (EVENT_ROW.test(line)) {
      run.push(line);
      continue;
    }
    sorted.push(...run.sort(), line);
    run = [];
  }
  return sorted.slice(0, -1);
}

function comparable(lines: readonly string[], shown: 'docs' | 'run'): string[] {
  const normalised = sortEventRows(
    lines.map(normalise).filter((line) => shown === 'docs' || !TRANSIENT.test(line)),
  );
  while (normalised.length > 0 && normalised[0] === '') normalised.shift();
  while (normalised.length > 0 && normalised.at(-1) === '') normalised.pop();
  return normalised;
}

/** Whether `actual` (lines a terminal shows) is what `expected` (the docs' lines) shows. */
export function matches(expected: readonly string[], actual: readonly string[]): boolean {
  const want = comparable(expected, 'docs').map((line) => (ELISION.test(line) ? undefined : line));
  const have = comparable(actual, 'run');
  const memo = new Map<string, boolean>();
  const from = (w: number, h: number): boolean => {
    const key = `${w}:${h}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (w === want.length) result = h === have.length;
    else if (want[w] === undefined) result = from(w + 1, h) || (h < have.length && from(w, h + 1));
    else result = h < have.length && want[w] === have[h] && from(w + 1, h + 1);
    memo.set(key, result);
    return result;
  };
  return from(0, 0);
}

/** The two sides as compared, for a failure's message. */
export function describeMismatch(
  where: string,
  command: string,
  expected: readonly string[],
  actual: readonly string[],
): string {
  const indent = (lines: readonly string[]) => lines.map((line) => `    ${line}`).join('\n');
  return [
    `${where}: \`${command}\` shows other lines than the docs`,
    `  the docs (normalised):\n${indent(comparable(expected, 'docs'))}`,
    `  the terminal (normalised):\n${indent(comparable(actual, 'run'))}`,
    `  the terminal, as it showed them:\n${indent(actual)}`,
  ].join('\n');
}
