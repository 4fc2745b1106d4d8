// Test helper: how the stand-in tools run cheaply. A Node process per tool call cost 40–120 ms of a
// core (the Android tools' module is type-stripped on every start), and the owned-devices stories
// make thousands of calls. So each test world runs one server in the test's process, and the tools
// on PATH are bash shims: a shim connects to the server on loopback and sends its pid; the server
// reads the call from /proc/<pid> (argv from cmdline, the environment, the working folder), runs
// the same stand-in code on the same files (asking the shim for its stdin if the tool reads it),
// and sends back the exit code, stdout and stderr, which the shim prints and exits with. The driver still
// starts an external process found on PATH and reads its pipes and exit code (ADR 0022). Linux
// only (/proc), and the caller must share the test's network namespace (no server in another one).
import { readFileSync, readlinkSync, readSync, writeSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { basename } from 'node:path';

/**
 * How a world's stand-in executables run: `server` (shims answered by a StandInServer; the
 * default) or `processes` (each call a Node process running the same program, as before ADR 0022:
 * SIMLOCK_STAND_INS=processes, or a test comparing the two).
 */
export type StandInLaunch = 'server' | 'processes';

export function defaultLaunch(): StandInLaunch {
  // The server reads each call from /proc: elsewhere (a Mac) the stand-ins stay Node processes.
  if (process.platform !== 'linux') return 'processes';
  return process.env.SIMLOCK_STAND_INS === 'processes' ? 'processes' : 'server';
}

/** One call of a stand-in tool, as the shim's process has it. */
export interface ToolCall {
  /** The executable's name (adb, xcrun, …) and where it is. */
  tool: string;
  file: string;
  /** The arguments after the executable. */
  argv: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The shim's pid (what the tool's own process.pid was). */
  pid: number;
  /** One read of the tool's stdin, as a tool blocked on its pipe would get it. */
  readLine: () => string;
}

export interface ToolAnswer {
  exitCode: number;
  stdout: string;
  stderr: string;
  /**
   * A call that waits (a boot that does not complete): asked again every 100 ms until it gives
   * the rest of its stdout, while the shim waits as the tool would (until its caller stops it).
   */
  pending?: () => string | undefined;
}

export type ToolHandler = (call: ToolCall) => ToolAnswer;

/** How long the server waits for a shim's stdin (the shim itself gives up after 2 s). */
const STDIN_WAIT_MS = 5000;

export class StandInServer {
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(handle: ToolHandler): Promise<StandInServer> {
    const server = createServer((socket) => serve(socket, handle));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    // A world a test forgot to clean up must not keep its worker alive.
    server.unref();
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return new StandInServer(server, address.port);
  }

  /** Writes the executable `file`: a shim whose calls this server answers. */
  async writeShim(file: string): Promise<void> {
    await writeFile(file, shimSource(this.port));
    await chmod(file, 0o755);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

// bash opens the connection itself (/dev/tcp), so a call starts one bash (about 2 ms) and no Node.
// The shim sends "<pid>\n". When the tool reads stdin, the server asks ("stdin\n") and waits, as
// the tool would, for the shim's "<n>\n" and n bytes (one read of up to 256; n = -1 when nothing
// came in 2 s: a pipe left open). The answer is "<exit code> <stdout bytes> <stderr bytes>\n" and
// the two texts, which bash reads with `read -N` (bytes, under LC_ALL=C) and prints with printf.
function shimSource(port: number): string {
  return `#!/bin/bash
# A stand-in tool (test/stand-ins/stand-in-server.ts): its test world's server answers the call.
LC_ALL=C
{ exec 3<>/dev/tcp/127.0.0.1/${port}; } 2>/dev/null || {
  echo "stand-in \${0##*/}: its server (127.0.0.1:${port}) is gone" >&2
  exit 97
}
echo "$$" >&3
read -r code outBytes errBytes <&3 || exit 97
if [ "$code" = stdin ]; then
  IFS= read -r -d '' -N 256 -t 2 input
  if (($? > 128)) && [ -z "$input" ]; then size=-1; else size=\${#input}; fi
  printf '%s\\n%s' "$size" "$input" >&3
  read -r code outBytes errBytes <&3 || exit 97
fi
if ((outBytes > 0)); then read -r -N "$outBytes" text <&3; printf '%s' "$text"; fi
if ((errBytes > 0)); then read -r -N "$errBytes" text <&3; printf '%s' "$text" >&2; fi
exit "$code"
`;
}

function serve(socket: Socket, handle: ToolHandler): void {
  socket.on('error', () => undefined);
  let received = '';
  const onData = (chunk: Buffer) => {
    received += chunk.toString();
    if (!received.includes('\n')) return;
    socket.off('data', onData);
    let result: ToolAnswer;
    try {
      result = answer(Number(received.trim()), socket, handle);
    } catch {
      // The shim is gone (its caller's timeout killed it): nobody is left to answer.
      socket.destroy();
      return;
    }
    const { pending } = result;
    if (pending === undefined) return socket.end(reply(result));
    // Waiting outside the event loop's way: the other calls go on meanwhile.
    const timer = setInterval(() => {
      const rest = pending();
      if (rest === undefined) return;
      clearInterval(timer);
      socket.end(reply({ ...result, stdout: result.stdout + rest }));
    }, 100);
    socket.on('close', () => clearInterval(timer));
  };
  socket.on('data', onData);
}

function answer(pid: number, socket: Socket, handle: ToolHandler): ToolAnswer {
  const proc = `/proc/${pid}`;
  const [, file = '', ...argv] = nulSeparated(readFileSync(`${proc}/cmdline`, 'utf8'));
  const env: NodeJS.ProcessEnv = {};
  for (const entry of nulSeparated(readFileSync(`${proc}/environ`, 'utf8'))) {
    const at = entry.indexOf('=');
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  const call: ToolCall = {
    tool: basename(file),
    file,
    argv,
    env,
    cwd: readlinkSync(`${proc}/cwd`),
    pid,
    readLine: () => {
      const input = askForStdin(socket);
      // The real tool would wait here until its caller's timeout; the stand-in says why instead.
      if (input === undefined) throw new Error('stand-in read stdin, which was left open');
      return input;
    },
  };
  let result: ToolAnswer;
  try {
    result = handle(call);
  } catch (error) {
    // What Node prints for an uncaught error, with its exit code.
    result = { exitCode: 1, stdout: '', stderr: `${(error as Error).stack ?? String(error)}\n` };
  }
  return result;
}

function reply(result: ToolAnswer): Buffer {
  const stdout = Buffer.from(result.stdout);
  const stderr = Buffer.from(result.stderr);
  // bash drops NUL bytes from what it reads: an answer with one would arrive changed.
  if (stdout.includes(0) || stderr.includes(0))
    throw new Error('a stand-in answer with a NUL byte');
  const header = `${result.exitCode} ${stdout.length} ${stderr.length}\n`;
  return Buffer.concat([Buffer.from(header), stdout, stderr]);
}

/**
 * Asks the shim for one read of its stdin and waits for it, synchronously as the stand-in code
 * reads (the event loop waits too; at most STDIN_WAIT_MS, and only for a tool that reads stdin).
 */
function askForStdin(socket: Socket): string | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('stand-in server: the socket has no fd');
  writeSync(fd, 'stdin\n');
  const chunk = Buffer.alloc(4096);
  let got = Buffer.alloc(0);
  const deadline = Date.now() + STDIN_WAIT_MS;
  for (;;) {
    const end = got.indexOf('\n');
    if (end !== -1) {
      const size = Number(got.subarray(0, end).toString());
      if (size < 0) return undefined;
      if (got.length > end + size) return got.subarray(end + 1, end + 1 + size).toString();
    }
    try {
      const count = readSync(fd, chunk);
      if (count === 0) throw new Error('stand-in server: the shim went away');
      got = Buffer.concat([got, chunk.subarray(0, count)]);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      if (Date.now() > deadline) return undefined;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    }
  }
}

function nulSeparated(text: string): string[] {
  const parts = text.split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}
