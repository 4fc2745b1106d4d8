// docs/CLI.md lists exactly the error codes of api/errors.ts, each with its exit code and summary.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../api/index.js';

const doc = readFileSync(fileURLToPath(new URL('../docs/CLI.md', import.meta.url)), 'utf8');

/** The rows of the table headed `| code | exit | meaning |`. */
function exitCodeTable(): { code: string; exit: number; summary: string }[] {
  const lines = doc.split('\n');
  const start = lines.findIndex((line) => /^\|\s*code\s*\|\s*exit\s*\|\s*meaning\s*\|$/.test(line));
  expect(start, 'docs/CLI.md has a "| code | exit | meaning |" table').toBeGreaterThanOrEqual(0);
  const rows: { code: string; exit: number; summary: string }[] = [];
  for (const line of lines.slice(start + 2)) {
    const match = /^\|\s*`?([A-Z_]+)`?\s*\|\s*(\d+)\s*\|\s*(.*?)\s*\|$/.exec(line);
    if (!match) break;
    rows.push({ code: match[1] ?? '', exit: Number(match[2]), summary: match[3] ?? '' });
  }
  return rows;
}

describe('docs/CLI.md', () => {
  it('lists exactly the error codes and exit codes of api/errors.ts, in its order', () => {
    const rows = exitCodeTable();
    expect(rows.map(({ code, exit }) => [code, exit])).toEqual(
      Object.entries(ERRORS).map(([code, { exitCode }]) => [code, exitCode]),
    );
  });

  it('gives each code the summary api/errors.ts gives it', () => {
    for (const row of exitCodeTable()) {
      expect(row.summary).toBe(ERRORS[row.code as keyof typeof ERRORS].summary);
    }
  });

  it('documents every command', () => {
    for (const command of [
      'lease',
      'release',
      'list',
      'worker',
      'device',
      'console',
      'mcp',
      'completion',
    ]) {
      expect(doc).toContain(`## ${command}`);
    }
  });
});
