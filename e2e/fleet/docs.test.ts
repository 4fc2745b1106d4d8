// The README's second shell and the docs' sessions, typed as a person types them: `npm run up`'s
// demo fleet (demo.ts, on a control plane of this file's own, so that the names are the docs'
// names), then each command in a new bash on a terminal with only the machine's PATH (here Node 20
// first, which the plugin refuses) that sources the env file the fleet wrote, the plugin run by
// its kubectl name. What the terminal shows is compared with the docs (doc-sessions.ts).
//
// SIMLOCK_DOCS_WRITE=1 writes what the terminal showed into the docs where they differ.
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoFleet, type DemoFleet } from './demo.js';
import { fencedBlocks, sessionOf, type DocCommand, type FencedBlock } from './doc-sessions.js';
import { WRITE_DOCS, firstMismatch, replay, writeActual } from './replay.js';
import { SYSTEM_PATH, runTyped, typeCommand, type ShellSetup } from './terminal.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

let workDir = '';
let demo: DemoFleet | undefined;
/** What `npm run up` printed, the work folder taken out of its paths. */
let upOutput: string[] = [];
const stops: (() => Promise<void>)[] = [];

/** A new shell of the README's reader, in the folder that holds .simlock/fleet. */
const shell = (): ShellSetup => ({
  cwd: workDir,
  setup: 'source .simlock/fleet/env',
  // The desktop's URL opener replaced by one that notes the URL: a test opens no browser.
  path: `${join(workDir, 'opener')}:${SYSTEM_PATH}`,
  home: homedir(),
});

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'simlock-docs-'));
  await mkdir(join(workDir, 'opener'));
  for (const name of ['xdg-open', 'open']) {
    const opener = join(workDir, 'opener', name);
    await writeFile(opener, `#!/bin/sh\necho "$1" >> '${join(workDir, 'opened')}'\n`);
    await chmod(opener, 0o755);
  }
  const printed: string[] = [];
  demo = await startDemoFleet({
    stateDir: join(workDir, '.simlock', 'fleet'),
    print: (lines) => printed.push(...lines.split('\n')),
    onStarted: (stop) => stops.push(stop),
  });
  upOutput = printed.map((line) => line.replaceAll(`${workDir}/`, ''));
}, 240_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  if (workDir) await rm(workDir, { recursive: true, force: true });
}, 60_000);

/** The README's block for the second shell: its lines without their comments. */
async function readmeSecondShell(): Promise<{ command: string; comment: string }[]> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const block = fencedBlocks(readme).find((candidate) =>
    candidate.lines.some((line) => line.startsWith('source .simlock/fleet/env')),
  );
  if (!block) throw new Error('README.md has no block with `source .simlock/fleet/env`');
  return block.lines
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [command = '', comment = ''] = line.split(/\s+#\s*/, 2);
      return { command: command.trim(), comment: comment.trim() };
    });
}

/** The commands of a doc's sessions, in the doc's order. */
async function docCommands(path: string): Promise<DocCommand[]> {
  const blocks = fencedBlocks(await readFile(join(root, path), 'utf8'));
  return blocks.flatMap((block) => sessionOf(block) ?? []);
}

async function replayDoc(path: string): Promise<void> {
  const replayed = await replay(await docCommands(path), {
    shell: shell(),
    given: { 'npm run up': upOutput },
  });
  if (WRITE_DOCS) {
    await writeActual(join(root, path), replayed);
    console.log(`${path}: wrote ${replayed.filter((entry) => !entry.ok).length} outputs`);
    return;
  }
  expect(firstMismatch(path, replayed)).toBeUndefined();
}

describe("the README's second shell, on the machine's own Node", () => {
  it('runs `kubectl simlock worker list` after `source .simlock/fleet/env`', async () => {
    const machineNode = await runTyped({ ...shell(), setup: 'true' }, 'node --version');
    console.log(`the machine's node in a new shell: ${machineNode.lines.join(' ') || 'none'}`);
    const listed = await runTyped(shell(), 'kubectl simlock worker list');
    expect(listed.lines.join('\n')).not.toContain('simlock needs Node.js');
    expect(listed).toMatchObject({ exitCode: 0 });
    expect(listed.lines[0]).toMatch(/^NAME\s+LABEL\s+DRAINED\s+HEALTH/);
    expect(listed.lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual([
      'worker-a',
      'worker-b',
      'worker-c',
    ]);
  });

  it('runs every command of the README as written', async () => {
    const lines = await readmeSecondShell();
    expect(lines[0]?.command).toBe('source .simlock/fleet/env');
    let lease: string | undefined;
    for (const { command: written, comment } of lines.slice(1)) {
      const command = lease ? written.replaceAll('lease-xxxxx', lease) : written;
      if (command === 'kubectl simlock console') {
        await openConsole();
        continue;
      }
      const result = await runTyped(shell(), command);
      expect({ command, ...result }).toMatchObject({ command, exitCode: 0 });
      const shown = /^prints: (.*)$/.exec(comment)?.[1];
      if (shown) {
        // `Lease lease-xxxxx: iPhone 16 <udid> on worker-a`: the name and the udid vary.
        const pattern = shown
          .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          .replace('lease-xxxxx', '(lease-[a-z0-9]{5})')
          .replace('<udid>', '\\S+');
        const line = result.lines.find((text) => new RegExp(`^${pattern}$`).test(text));
        expect(line, `${command} prints ${shown}: ${result.lines.join('\n')}`).toBeDefined();
        lease = new RegExp(`^${pattern}$`).exec(line ?? '')?.[1] ?? lease;
      }
    }
    expect(lease, 'the README leases a device').toBeDefined();
  });
});

/** `kubectl simlock console`: prints its URL, opens it, serves it, and ends on Ctrl-C. */
async function openConsole(): Promise<void> {
  const typed = typeCommand(shell(), 'kubectl simlock console');
  try {
    const deadline = Date.now() + 30_000;
    let url: string | undefined;
    while (!url && Date.now() < deadline) {
      url = typed
        .lines()
        .map((line) => /^simlock console: (http\S+)$/.exec(line)?.[1])
        .find(Boolean);
      if (!url) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(url, `the console's URL: ${typed.lines().join('\n')}`).toBeDefined();
    const page = await fetch(url ?? '', { redirect: 'manual' });
    expect(page.status).toBeLessThan(400);
    // The plugin prints the URL and then starts the opener, which writes its argument when it
    // runs: wait for that, not for the line before it.
    const openedLines = async () =>
      (await readFile(join(workDir, 'opened'), 'utf8').catch(() => '')).trim().split('\n');
    let opened = await openedLines();
    while (!opened.includes(url ?? '') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      opened = await openedLines();
    }
    expect(opened).toContain(url);
    typed.pressCtrlC();
    expect(await typed.ended).toMatchObject({ exitCode: 0 });
  } finally {
    typed.kill();
  }
}

/** A block that shows no output: commands to type (`sh`), or a command's synopsis. */
function showsNoOutput(block: FencedBlock): boolean {
  if (block.info === 'sh') return true;
  return (
    block.info === '' &&
    block.lines.every(
      (line) => line.trim() === '' || /^(kubectl simlock |kubectl-simlock |\s)/.test(line),
    )
  );
}

async function uncheckedBlocks(path: string): Promise<string[]> {
  const blocks = fencedBlocks(await readFile(join(root, path), 'utf8'));
  return blocks
    .filter((block) => !sessionOf(block) && !showsNoOutput(block))
    .map((block) => `${path}:${block.line}`);
}

/** Back to the fleet as `npm run up` left it: no requests, no worker drained (as the admin). */
async function resetFleet(): Promise<void> {
  if (!demo) throw new Error('no demo fleet');
  const kubectl = join(demo.controlPlane.binDir, 'kubectl');
  const admin = ['--kubeconfig', demo.controlPlane.kubeconfigPath];
  await run(kubectl, [...admin, 'delete', 'leaserequests', '--all', '-n', 'default', '--wait']);
  await run(kubectl, [
    ...admin,
    'patch',
    'workers',
    'worker-c',
    '--type',
    'merge',
    '-p',
    '{"spec":{"drained":false}}',
  ]);
}

describe('the docs show what the commands print', () => {
  it('docs/TUTORIAL.md, typed from its start, after `npm run up`', async () => {
    expect(await uncheckedBlocks('docs/TUTORIAL.md')).toEqual([]);
    await replayDoc('docs/TUTORIAL.md');
  }, 300_000);

  it('docs/CLI.md, typed in its order, on the fleet with no request and no worker drained', async () => {
    expect(await uncheckedBlocks('docs/CLI.md')).toEqual([]);
    await resetFleet();
    await replayDoc('docs/CLI.md');
  }, 300_000);
});
