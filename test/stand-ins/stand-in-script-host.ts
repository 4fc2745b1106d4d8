// Test helper: runs a stand-in's program (plain JavaScript written for `node <file> args`: the rules
// stand-in of stand-in.ts, simctl-stand-in-script.ts) inside the stand-in server for one call, with
// a `process` of that call: its argv, environment, pid and working folder, its stdout, stderr and
// exit code. The program's text is the one a process would run; `require` gives it the real node:
// modules, with relative paths taken from the call's working folder, as in its own process.
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { compileFunction } from 'node:vm';
import type { ToolAnswer, ToolCall, ToolHandler } from './stand-in-server.js';

const nodeRequire = createRequire(import.meta.url);

/** process.exit(): ends the program as the process would end. */
class ProcessExit extends Error {}

export function scriptHandler(source: string, name: string): ToolHandler {
  const program = compileFunction(source, ['require', 'process'], { filename: name }) as (
    require: (id: string) => unknown,
    process: unknown,
  ) => void;
  return (call) => {
    const answer: ToolAnswer = { exitCode: 0, stdout: '', stderr: '' };
    const callProcess = {
      argv: [process.execPath, call.file, ...call.argv],
      env: call.env,
      pid: call.pid,
      cwd: () => call.cwd,
      exitCode: undefined as number | undefined,
      stdout: {
        write(text: string) {
          answer.stdout += text;
          return true;
        },
      },
      stderr: {
        write(text: string) {
          answer.stderr += text;
          return true;
        },
      },
      /** The program waits, asking `poll` until it gives the rest of its stdout (no blocking). */
      standInWait(poll: () => string | undefined) {
        answer.pending = poll;
      },
      exit(code?: number): never {
        if (code !== undefined) this.exitCode = code;
        throw new ProcessExit();
      },
    };
    try {
      program(requireAt(call), callProcess);
    } catch (error) {
      if (!(error instanceof ProcessExit)) throw error;
    }
    answer.exitCode = callProcess.exitCode ?? 0;
    return answer;
  };
}

/** node:path and node:fs resolving relative paths from the call's folder; the rest as they are. */
function requireAt(call: ToolCall): (id: string) => unknown {
  const at = (value: unknown) =>
    typeof value === 'string' && !path.isAbsolute(value) ? path.resolve(call.cwd, value) : value;
  const paths = { ...path, resolve: (...parts: string[]) => path.resolve(call.cwd, ...parts) };
  const fs = nodeRequire('node:fs') as Record<string, unknown>;
  const fsAt = new Proxy(fs, {
    get(target, key) {
      const value = target[key as string];
      if (typeof value !== 'function') return value;
      // The path arguments: the first, and the second of a rename.
      return (...args: unknown[]) =>
        (value as (...a: unknown[]) => unknown)(
          at(args[0]),
          ...(key === 'renameSync' ? [at(args[1]), ...args.slice(2)] : args.slice(1)),
        );
    },
  });
  return (id) => {
    if (id === 'node:path' || id === 'path') return paths;
    if (id === 'node:fs' || id === 'fs') return fsAt;
    return nodeRequire(id) as unknown;
  };
}
