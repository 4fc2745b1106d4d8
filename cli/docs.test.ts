// docs/CLI.md lists exactly the error codes of api/errors.ts, each with its exit code and summary;
// names every command the plugin registers; and prints the reason texts and the one-line examples
// as the formatter prints them. (Its sessions, the outputs of real runs, are typed again against
// `npm run up`'s fleet by e2e/fleet/docs.test.ts.)
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AgentQueueEntry,
  ERRORS,
  PLATFORMS,
  reasonLine,
  type CapacityReason,
  type LeaseRequestObject,
  type WaitingReason,
} from '../api/index.js';
import { runCli } from './app.js';
import { progressLines } from './format/progress.js';
import { agentEntryLine, controllerRequestLines } from './format/requests.js';
import { RecordingIO } from './io.js';
import { aLeaseRequest } from '../test/fixtures/objects.js';

const doc = readFileSync(fileURLToPath(new URL('../docs/CLI.md', import.meta.url)), 'utf8');

/** The rows of the table whose header line is `header`, split into trimmed cells. */
function tableRows(header: RegExp): string[][] {
  const lines = doc.split('\n');
  const start = lines.findIndex((line) => header.test(line));
  expect(start, `docs/CLI.md has a table headed ${String(header)}`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The rows of the table headed `| code | exit | meaning |`. */
function exitCodeTable(): { code: string; exit: number; summary: string }[] {
  return tableRows(/^\|\s*code\s*\|\s*exit\s*\|\s*meaning\s*\|$/).map(([code, exit, summary]) => ({
    code: (code ?? '').replaceAll('`', ''),
    exit: Number(exit),
    summary: summary ?? '',
  }));
}

/** What `kubectl simlock [words] --help` lists under "Commands:": the command names. */
async function helpCommands(words: string[]): Promise<string[]> {
  const printed: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    printed.push(args.map(String).join(' '));
  });
  try {
    expect(await runCli([...words, '--help'], new RecordingIO())).toBe(0);
  } finally {
    log.mockRestore();
  }
  const lines = printed.join('\n').split('\n');
  const start = lines.indexOf('Commands:');
  expect(start, `kubectl simlock ${words.join(' ')} --help lists commands`).toBeGreaterThan(0);
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    const match = new RegExp(
      `^\\s+kubectl simlock ${words.map((w) => `${w} `).join('')}(\\S+)`,
    ).exec(line);
    if (match?.[1]) names.push(match[1]);
  }
  return names;
}

afterEach(() => {
  vi.restoreAllMocks();
});

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

  it('names every command the plugin registers in its list of commands, each with a section', async () => {
    const commands = await helpCommands([]);
    expect(commands).toContain('lease');
    const list = /^Commands: [\s\S]*?\n\n/m.exec(doc)?.[0] ?? '';
    expect(list, 'docs/CLI.md has a "Commands: …" paragraph').not.toBe('');
    const listed = [...list.matchAll(/`([a-z-]+)`/g)].map((match) => match[1]);
    expect([...listed].sort()).toEqual([...commands].sort());
    for (const [, anchor] of list.matchAll(/\]\(#([a-z-]+)\)/g)) {
      expect(doc, `a section for #${anchor}`).toMatch(new RegExp(`^## ${anchor}$`, 'm'));
    }
  });

  it.each([['worker'], ['device']])('shows every %s subcommand in its synopsis', async (word) => {
    const subcommands = await helpCommands([word]);
    expect(subcommands.length).toBeGreaterThan(0);
    for (const subcommand of subcommands) {
      expect(doc).toMatch(new RegExp(`^kubectl simlock ${word} ${subcommand}\\b`, 'm'));
    }
  });

  it('prints each reason as the plugin prints it', () => {
    const rows = tableRows(/^\|\s*reason\s*\|\s*printed\s*\|$/);
    expect(rows.length).toBeGreaterThan(0);
    for (const [reasonCell = '', printed = ''] of rows) {
      const [reason, capacityReason] = [...reasonCell.matchAll(/`([a-z-]+)`/g)].map(
        (match) => match[1],
      );
      const entry = {
        reason: reason as WaitingReason,
        ...(capacityReason ? { capacityReason: capacityReason as CapacityReason } : {}),
      };
      const texts = [...new Set(PLATFORMS.map((platform) => reasonLine(entry, platform)))];
      expect(printed, reasonCell).toBe(texts.join(' / '));
    }
  });

  it('shows the one-line requests as the formatter prints them', () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    const agentLine = /`(Request req_9: [^`]+)`/.exec(doc)?.[1];
    const entry = AgentQueueEntry.parse({
      id: 'req_9',
      holder: 'local-agent',
      platform: 'ios',
      model: 'iPhone 16',
      reason: 'full',
      capacityReason: 'platform-running-limit',
      queuedAt: new Date(now - 5_000).toISOString(),
    });
    expect(agentLine).toBe(agentEntryLine(entry, 'worker-a', 1, now));

    const bareLine = /`(Request j1: [^`]+)`/.exec(doc)?.[1];
    const bare = aLeaseRequest('j1')
      .android()
      .createdAt(now - 3_000)
      .obj() as LeaseRequestObject;
    expect(bareLine).toBe(controllerRequestLines(bare, { now, worker: (name) => name })[0]);
  });

  it("shows a waiting request's estimate as the formatter prints it", () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    const request = aLeaseRequest('ci-6')
      .ios('iPhone 16')
      .spec({ holder: 'ci' })
      .createdAt(now - 40_000)
      .status({
        phase: 'Waiting',
        position: 2,
        estimate: {
          grantAt: new Date(now + 170_000).toISOString(),
          basis: '2 leases of iPhone 16 end before; 1 ahead of you',
        },
      })
      .obj() as LeaseRequestObject;
    const shown = [...doc.matchAll(/`(Request ci-6: ci[^`]+)`/g)].map((match) => match[1]);
    expect(shown).toEqual([controllerRequestLines(request, { now, worker: (name) => name })[0]]);
  });

  it('shows the stages of making and booting a device as the formatters print them', () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    const request = (stage: 'provisioning' | 'booting', estimatedSeconds: number, waited: number) =>
      aLeaseRequest('ci-5')
        .ios('iPhone 16')
        .spec({ holder: 'ci' })
        .createdAt(now - waited * 1000)
        .status({
          phase: 'Dispatched',
          worker: 'worker-a',
          progress: { stage, since: new Date(now).toISOString(), estimatedSeconds },
        })
        .obj() as LeaseRequestObject;
    const shown = [...doc.matchAll(/`(Request ci-5: [^`]+)`/g)].map((match) => match[1]);
    const worker = (name: string) => name;
    expect(shown).toEqual([
      progressLines(request('provisioning', 40, 1), { now, worker })[0],
      progressLines(request('booting', 25, 42), { now, worker })[0],
      controllerRequestLines(request('booting', 25, 42), { now, worker })[0],
    ]);
  });
});
