// The two adb servers the driver talks to. The agent's own (`adb -P <port>`) serves the emulators
// it boots; it is started by the agent with emulator scanning, mDNS and USB off, so it sees only
// the emulators that register with it. The default one (ANDROID_ADB_SERVER_PORT of the agent's
// environment, else 5037) is the person's and the phones': the agent lists phones there and never
// starts, restarts or kills it on purpose. No call here is ever `kill-server`.
import { createServer } from 'node:net';
import { runChecked, type CommandOptions, type CommandRunner } from '../command.js';
import { DriverError } from '../driver.js';
import { parseAdbDevices, type AdbEntry } from './adb-output.js';

/** The environment of every call to the agent's server: a server it starts scans nothing. */
export const AGENT_SERVER_ENV: Readonly<Record<string, string>> = {
  ADB_EMU: '0',
  ADB_MDNS: '0',
  ADB_USB: '0',
};

/**
 * Console ports of the agent's emulators (even; adb port = console + 1). Above 5585, so a server
 * scanning 5555–5585 at start (the person's) never finds them; 5682 is the emulator's highest.
 */
export const FIRST_OWN_PORT = 5600;
export const LAST_OWN_PORT = 5682;

export function emulatorPort(serial: string): number | undefined {
  const port = /^emulator-(\d{4,5})$/.exec(serial)?.[1];
  return port === undefined ? undefined : Number(port);
}

export function isOwnPort(port: number | undefined): port is number {
  return port !== undefined && port >= FIRST_OWN_PORT && port <= LAST_OWN_PORT;
}

/** Whether nothing on this host listens on 127.0.0.1:`port` (a bind that succeeds is closed). */
export function loopbackPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}

/** The agent's server port must be neither the default server's nor an emulator's. */
export function checkServerPort(port: number, env: NodeJS.ProcessEnv): void {
  const defaultPort = Number(env.ANDROID_ADB_SERVER_PORT || '5037');
  if (port === defaultPort) {
    throw new DriverError(
      `adb.serverPort ${port} is the default adb server's port (a person's and the phones'): give the agent a port of its own`,
    );
  }
  if (port >= 5554 && port <= LAST_OWN_PORT + 1) {
    throw new DriverError(
      `adb.serverPort ${port} is among the emulators' console and adb ports (5554–${LAST_OWN_PORT + 1})`,
    );
  }
}

export class AdbServers {
  readonly #run: CommandRunner;
  /** The agent's own server. */
  readonly port: number;
  #started = false;

  constructor(run: CommandRunner, port: number) {
    this.#run = run;
    this.port = port;
  }

  /** `adb -P <port> …` with the agent server's environment. */
  runOnAgent(args: readonly string[], options: CommandOptions = {}) {
    return this.#run(['adb', '-P', String(this.port), ...args], {
      ...options,
      env: { ...AGENT_SERVER_ENV, ...options.env },
    });
  }

  /** `adb …` on the default server, in the agent's environment as it is. */
  runOnDefault(args: readonly string[], options: CommandOptions = {}) {
    return this.#run(['adb', ...args], options);
  }

  /**
   * Starts the agent's server unless it is up (`start-server` answers at once then). Every call
   * to it carries the same environment, so one that finds it down starts it the same way.
   */
  async startAgentServer(force = false): Promise<void> {
    if (this.#started && !force) return;
    const result = await this.runOnAgent(['start-server'], { timeoutMs: 30_000 });
    if (result.exitCode !== 0) {
      const said = (result.stderr.trim() || result.stdout.trim()).slice(0, 500);
      throw new DriverError(`adb -P ${this.port} start-server exited ${result.exitCode}: ${said}`);
    }
    this.#started = true;
  }

  /** The emulators on the agent's server, on its own ports. */
  async agentEmulators(): Promise<AdbEntry[]> {
    await this.startAgentServer();
    const result = await this.runOnAgent(['devices', '-l']);
    if (result.exitCode !== 0) {
      throw new DriverError(
        `adb -P ${this.port} devices -l exited ${result.exitCode}: ${result.stderr.trim().slice(0, 500)}`,
      );
    }
    return parse(result.stdout, `adb -P ${this.port} devices`).filter((entry) =>
      isOwnPort(emulatorPort(entry.serial)),
    );
  }

  /** The phones on the default server (its emulators are the person's: left out). */
  async defaultPhones(): Promise<AdbEntry[]> {
    const result = await runChecked(this.#run, ['adb', 'devices', '-l']);
    return parse(result.stdout, 'adb devices').filter(
      (entry) => emulatorPort(entry.serial) === undefined,
    );
  }
}

function parse(text: string, what: string): AdbEntry[] {
  try {
    return parseAdbDevices(text);
  } catch (error) {
    throw new DriverError(`${what}: unreadable output`, { cause: error });
  }
}
