// What simlock runs on (ADR 0012): the pinned Node lines, package.json's engines and the image's
// base agree, and a process the tests start by name runs on the Node that runs the tests.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(fileURLToPath(new URL(path, import.meta.url)), 'utf8');

function pinned(name: string): string {
  const match = new RegExp(`^${name}=(\\d+\\.\\d+\\.\\d+)$`, 'm').exec(read('node-versions.env'));
  if (!match?.[1]) throw new Error(`tools/node-versions.env has no ${name}`);
  return match[1];
}

/** Whether a version satisfies an engines range made of `^x.y.z` and `>=x.y.z` alternatives. */
function satisfies(version: string, range: string): boolean {
  const parts = (text: string) => text.split('.').map(Number) as [number, number, number];
  const compare = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
  const have = parts(version);
  return range.split('||').some((alternative) => {
    const match = /^\s*(\^|>=)(\d+\.\d+\.\d+)\s*$/.exec(alternative);
    if (!match?.[2])
      throw new Error(`engines alternative "${alternative}" is not ^x.y.z or >=x.y.z`);
    const floor = parts(match[2]);
    if (compare(have, floor) < 0) return false;
    return match[1] === '>=' || have[0] === floor[0];
  });
}

describe('the Node simlock runs on', () => {
  const engines = (JSON.parse(read('../package.json')) as { engines: { node: string } }).engines
    .node;

  it('is 24 for the suite and the image, and 22 is still promised and checked', () => {
    const current = pinned('NODE_VERSION');
    const oldest = pinned('NODE_22_VERSION');
    expect(current.split('.')[0]).toBe('24');
    expect(oldest.split('.')[0]).toBe('22');
    expect(satisfies(current, engines)).toBe(true);
    expect(satisfies(oldest, engines)).toBe(true);
    // Node 20 is past its end of life, and client-node 2 needs 22.19 (undici 8).
    expect(satisfies('20.19.0', engines)).toBe(false);
    expect(satisfies('22.18.0', engines)).toBe(false);
  });

  it('is the line of the image users build', () => {
    const major = pinned('NODE_VERSION').split('.')[0];
    expect(read('../Dockerfile')).toMatch(new RegExp(`^ARG NODE_IMAGE=node:${major}-slim$`, 'm'));
  });

  it('runs this test, and any process started by the name node', () => {
    expect(satisfies(process.versions.node, engines)).toBe(true);
    const child = execFileSync('node', ['-p', 'process.version'], { encoding: 'utf8' });
    expect(child.trim()).toBe(process.version);
  });
});
