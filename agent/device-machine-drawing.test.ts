// docs/AGENT.md draws the device machine ("A device's life"): this test fails when the drawing
// and DEVICE_TRANSITIONS differ by any edge (from, event, guard, to), as
// controller/request-machine.test.ts does for the request machine's drawing.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { DEVICE_TRANSITIONS } from './device-machine.js';

const edge = (from: string, event: string, guard: string | undefined, to: string) =>
  `${from} --${event}${guard ? ` [${guard}]` : ''}--> ${to}`;

it("docs/AGENT.md draws exactly the device machine's transition table", () => {
  const doc = readFileSync(new URL('../docs/AGENT.md', import.meta.url), 'utf8');
  const section = /\n## A device's life\n([\s\S]*?)(?=\n## )/.exec(doc)?.[1] ?? '';
  const diagram = /```mermaid\nstateDiagram-v2\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const drawn: string[] = [];
  for (const line of diagram.split('\n')) {
    const match = /^\s*(\w+) --> (\w+) ?: ?(\w+)(?: \[([\w ]+)\])?\s*$/.exec(line);
    if (match) drawn.push(edge(match[1] ?? '', match[3] ?? '', match[4], match[2] ?? ''));
  }
  const table = DEVICE_TRANSITIONS.map((row) => edge(row.from, row.event, row.when, row.to));
  expect(drawn.length).toBeGreaterThan(0);
  expect(drawn.sort()).toEqual(table.sort());
});
