// The plugin's commands, one file each: the definition (flags, help) here, the action in
// ../actions/, imported only when the command runs.
import type { Argv } from 'yargs';
import { consoleCommand } from './console.js';
import { deviceCommand } from './device.js';
import { execCommand } from './exec.js';
import { extendCommand } from './extend.js';
import { leaseCommand } from './lease.js';
import { listCommand } from './list.js';
import { mcpCommand } from './mcp.js';
import { releaseCommand } from './release.js';
import type { CommandRunner } from './runner.js';
import { whyCommand } from './why.js';
import { workerCommand } from './worker.js';

export type { ActionLoader, CommandRunner } from './runner.js';

export const COMMANDS: readonly ((cli: Argv, run: CommandRunner) => Argv)[] = [
  leaseCommand,
  releaseCommand,
  extendCommand,
  listCommand,
  whyCommand,
  workerCommand,
  deviceCommand,
  execCommand,
  consoleCommand,
  mcpCommand,
];
