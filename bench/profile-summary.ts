// Summarizes a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time,
// and the files. For reading the profiles the benchmarks' --cpu-prof writes.
//   node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top 30]
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [path] = process.argv.slice(2);
const topIndex = process.argv.indexOf('--top');
const top = topIndex > 0 ? Number(process.argv[topIndex + 1]) : 30;
if (!path) throw new Error('usage: profile-summary.ts FILE.cpuprofile [--top N]');
const profile = JSON.parse(await readFile(path, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMs = new Map<number, number>();
for (const [index, sample] of profile.samples.entries()) {
  selfMs.set(sample, (selfMs.get(sample) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000);
}
const total = [...selfMs.values()].reduce((sum, value) => sum + value, 0);
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
for (const [id, ms] of selfMs) {
  const frame = byId.get(id)?.callFrame;
  if (!frame) continue;
  const file = frame.url.replace(/^file:\/\/.*?\/(node_modules|work\/main)\//, '$1/') || '(native)';
  const name = `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
  byFile.set(file, (byFile.get(file) ?? 0) + ms);
}
const show = (title: string, entries: Map<string, number>) => {
  console.log(title);
  for (const [name, ms] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${ms.toFixed(0).padStart(8)} ms ${((ms / total) * 100).toFixed(1).padStart(5)}%  ${name}`,
    );
  }
};
console.log(`total sampled ${total.toFixed(0)} ms`);
show('self time by function', byFunction);
show('self time by file', byFile);
