// What grew between two heap snapshots of one process (bench/soak.ts --heap-snapshots writes them):
// objects grouped by kind and constructor, with their count and self size in each, the groups that
// grew most first; before them, the totals by kind (V8's compiled code and its metadata are the kind
// `code`, its hidden classes `object shape`; what a program keeps is `object`, `array`, `string`,
// `closure`).
// Without --before, the largest groups of one snapshot.
//
//   node --import tsx bench/heap-summary.ts [--before A.heapsnapshot] --after B.heapsnapshot [--top 25]
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { CommandLine } from './harness/index.js';

const Snapshot = z.object({
  snapshot: z.object({
    meta: z.object({
      node_fields: z.array(z.string()),
      node_types: z.array(z.union([z.array(z.string()), z.string()])),
    }),
  }),
  nodes: z.array(z.number()),
  strings: z.array(z.string()),
});

interface Group {
  count: number;
  bytes: number;
}

// Strings are grouped by kind and the start of their text (JSON of one kind of object, say).
const STRINGS = new Set(['string', 'concatenated string', 'sliced string']);

interface Summary {
  /** By kind and constructor (strings by the start of their text). */
  groups: Map<string, Group>;
  /** By kind alone: string, code, object shape, closure, object, array, … */
  kinds: Map<string, Group>;
}

const add = (map: Map<string, Group>, key: string, bytes: number) => {
  const group = map.get(key) ?? { count: 0, bytes: 0 };
  group.count++;
  group.bytes += bytes;
  map.set(key, group);
};

async function summary(path: string): Promise<Summary> {
  const snapshot = Snapshot.parse(JSON.parse(await readFile(path, 'utf8')));
  const fields = snapshot.snapshot.meta.node_fields;
  const [kinds] = snapshot.snapshot.meta.node_types;
  const at = (name: string) => {
    const index = fields.indexOf(name);
    if (index < 0) throw new Error(`${path}: a snapshot without the node field ${name}`);
    return index;
  };
  const [typeAt, nameAt, sizeAt] = [at('type'), at('name'), at('self_size')];
  if (!Array.isArray(kinds)) throw new Error(`${path}: node types are not listed`);
  const result: Summary = { groups: new Map(), kinds: new Map() };
  for (let node = 0; node < snapshot.nodes.length; node += fields.length) {
    const kind = kinds[snapshot.nodes[node + typeAt] ?? 0] ?? '?';
    const name = snapshot.strings[snapshot.nodes[node + nameAt] ?? 0] ?? '?';
    const key = STRINGS.has(kind)
      ? `(${kind}) ${JSON.stringify(name.slice(0, 40))}`
      : kind === 'number'
        ? '(number)'
        : `${kind} ${name.slice(0, 60)}`;
    const bytes = snapshot.nodes[node + sizeAt] ?? 0;
    add(result.groups, key, bytes);
    add(result.kinds, kind, bytes);
  }
  return result;
}

const args = new CommandLine();
args.only(['--before', '--after', '--top']);
const top = args.integer('--top', 25, 1);
const beforePath = args.string('--before');
const afterPath = args.string('--after');
if (!afterPath) {
  console.error('usage: bench/heap-summary.ts [--before A.heapsnapshot] --after B.heapsnapshot');
  process.exit(64);
}
const empty: Summary = { groups: new Map(), kinds: new Map() };
const before = beforePath ? await summary(beforePath) : empty;
const after = await summary(afterPath);
const total = (map: Map<string, Group>) => [...map.values()].reduce((sum, g) => sum + g.bytes, 0);
const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
console.log(`self size: ${kib(total(before.kinds))} -> ${kib(total(after.kinds))}`);
const table = (b: Map<string, Group>, a: Map<string, Group>, heading: string, rows: number) => {
  console.log(`grew by      count before -> after   size before -> after   ${heading}`);
  const lines = [...new Set([...b.keys(), ...a.keys()])]
    .map((key) => {
      const was = b.get(key) ?? { count: 0, bytes: 0 };
      const is = a.get(key) ?? { count: 0, bytes: 0 };
      return { key, was, is, grew: is.bytes - was.bytes };
    })
    .sort((x, y) => y.grew - x.grew)
    .slice(0, rows);
  for (const { key, was, is, grew } of lines)
    console.log(
      `${kib(grew).padStart(10)}  ${String(was.count).padStart(8)} -> ${String(is.count).padEnd(8)}  ${kib(was.bytes).padStart(9)} -> ${kib(is.bytes).padEnd(9)}  ${key}`,
    );
};
table(before.kinds, after.kinds, 'kind', Number.MAX_SAFE_INTEGER);
console.log('');
table(before.groups, after.groups, 'group', top);
