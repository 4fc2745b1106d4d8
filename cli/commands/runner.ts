// What a command definition hands yargs as its handler: a runner around the command's action,
// which is imported only when that command runs, so that --help and shell completion (run on
// every Tab) start without loading the Kubernetes client.
import type { Action } from '../io.js';

export type ActionLoader = () => Promise<Action>;
export type CommandRunner = (
  load: ActionLoader,
) => (argv: Record<string, unknown>) => Promise<void>;
