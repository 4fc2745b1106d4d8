// Test helper: stand-in executables (xcrun, adb, emulator, …) written to a temp dir that tests put
// first on PATH. Each one checks the argv it receives against its rules, prints the recorded
// output, and logs every call, so a test proves both the parsing and the exact argv a driver ran.
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptHandler } from './stand-in-script-host.js';
import { defaultLaunch, StandInServer, type StandInLaunch } from './stand-in-server.js';

export interface StandInResponse {
  stdout?: string;
  stderr?: string;
  exitCode?: number;
  /** Written to the path given where the rule's argv says `{json-output}` (devicectl). */
  jsonOutput?: string;
}

export interface StandInRule extends StandInResponse {
  /** The exact arguments after the executable's name; `{json-output}` matches any one argument. */
  argv: string[];
  /** Answers for the 1st, 2nd, … matching call; the last repeats. Overrides the fields above. */
  responses?: StandInResponse[];
}

export const JSON_OUTPUT = '{json-output}';

// Plain JavaScript run for each call (in the world's stand-in server, or by node as the executable
// itself): read the rules afresh on every call so a test can change them.
const STAND_IN_SOURCE = String.raw`
const fs = require('node:fs');
const path = require('node:path');
const tool = path.basename(process.argv[1]);
const dir = path.dirname(process.argv[1]);
const args = process.argv.slice(2);
const rules = JSON.parse(fs.readFileSync(path.join(dir, tool + '.rules.json'), 'utf8'));
const logFile = path.join(dir, tool + '.calls.jsonl');
const previous = fs.existsSync(logFile)
  ? fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
  : [];
fs.appendFileSync(logFile, JSON.stringify(args) + '\n');
const matches = (rule, argv) =>
  rule.argv.length === argv.length && rule.argv.every((want, i) => want === '{json-output}' || want === argv[i]);
const rule = rules.find((candidate) => matches(candidate, args));
if (!rule) {
  process.stderr.write('stand-in ' + tool + ': unexpected argv ' + JSON.stringify(args) + '\n');
  process.exit(97);
}
const earlier = previous.filter((argv) => matches(rule, argv)).length;
const answer = rule.responses ? rule.responses[Math.min(earlier, rule.responses.length - 1)] : rule;
if (answer.jsonOutput !== undefined) {
  const at = rule.argv.indexOf('{json-output}');
  fs.writeFileSync(args[at], answer.jsonOutput);
}
if (answer.stdout) process.stdout.write(answer.stdout);
if (answer.stderr) process.stderr.write(answer.stderr);
process.exitCode = answer.exitCode ?? 0;
`;

export class StandIns {
  private constructor(
    readonly dir: string,
    private readonly server: StandInServer | undefined,
  ) {}

  static async create(
    tools: Record<string, StandInRule[]>,
    options: { launch?: StandInLaunch } = {},
  ): Promise<StandIns> {
    const dir = await mkdtemp(join(tmpdir(), 'simlock-stand-in-'));
    const server =
      (options.launch ?? defaultLaunch()) === 'server'
        ? await StandInServer.start(scriptHandler(STAND_IN_SOURCE, 'stand-in.cjs'))
        : undefined;
    const standIns = new StandIns(dir, server);
    for (const [tool, rules] of Object.entries(tools)) await standIns.setRules(tool, rules);
    return standIns;
  }

  /** The environment to run drivers in: the stand-ins first on PATH. */
  get env(): NodeJS.ProcessEnv {
    return { ...process.env, PATH: `${this.dir}:${process.env.PATH ?? ''}` };
  }

  async setRules(tool: string, rules: StandInRule[]): Promise<void> {
    const file = join(this.dir, tool);
    if (this.server !== undefined) {
      await this.server.writeShim(file);
    } else {
      await writeFile(file, `#!${process.execPath}\n${STAND_IN_SOURCE}`);
      await chmod(file, 0o755);
    }
    await writeFile(join(this.dir, `${tool}.rules.json`), JSON.stringify(rules));
  }

  /** Every argv the tool was called with, in order. */
  async calls(tool: string): Promise<string[][]> {
    const text = await readFile(join(this.dir, `${tool}.calls.jsonl`), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as string[]);
  }

  /** Waits until the tool has been called with `argv` (a detached process logs on its own time). */
  async waitForCall(tool: string, argv: string[], timeoutMs = 10_000): Promise<void> {
    const wanted = JSON.stringify(argv);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if ((await this.calls(tool)).some((call) => JSON.stringify(call) === wanted)) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`${tool} was not called with ${wanted} within ${timeoutMs} ms`);
  }

  async clearCalls(tool: string): Promise<void> {
    await writeFile(join(this.dir, `${tool}.calls.jsonl`), '');
  }

  // A tool the agent started just before it was killed may still write its state file while the
  // folder goes: rm tries again on ENOTEMPTY.
  async cleanup(): Promise<void> {
    await this.server?.close();
    await rm(this.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

/** Reads a recorded tool output from a driver's testdata folder. */
export function readTestdata(metaUrl: string, name: string): Promise<string> {
  return readFile(new URL(`testdata/${name}`, metaUrl), 'utf8');
}
