// Where the agent keeps what it owns (its simulator set, its AVD home, its records of devices it
// made): the config's dataDir, else the platform's place for a user's application data.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export interface DataDirInput {
  dataDir?: string | undefined;
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  home?: string;
}

/** The agent's data directory, absolute. */
export function resolveDataDir(input: DataDirInput = {}): string {
  if (input.dataDir !== undefined) return resolve(input.dataDir);
  const env = input.env ?? process.env;
  const home = input.home ?? homedir();
  if ((input.platform ?? process.platform) === 'darwin') {
    return join(home, 'Library', 'Application Support', 'simlock-agent');
  }
  const xdg = env.XDG_DATA_HOME;
  return xdg !== undefined && xdg.startsWith('/')
    ? join(xdg, 'simlock-agent')
    : join(home, '.local', 'share', 'simlock-agent');
}
