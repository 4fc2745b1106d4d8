// `simlock-agent doctor --config agent.yaml [--fix] [-o json]`: the doctor as a command, run on
// the device host itself (hosts may sit behind NAT; the work is on the host's own tools). It reads
// the same config as the daemon, makes the same drivers, and needs no cluster. Exit codes: 0
// healthy or all fixed, 1 problems left, 2 the config is wrong or --fix was refused.
import yargs from 'yargs';
import { systemClock } from '../runtime/index.js';
import { AgentConfigError, loadAgentConfig } from './config.js';
import { resolveDataDir } from './data-dir.js';
import { doctorJson, doctorTable } from './doctor-report.js';
import { doctorExitCode, DoctorRefusal, runDoctor } from './doctor.js';
import { createDriver } from './drivers/create.js';
import type { Driver } from './drivers/driver.js';

export interface DoctorCommandIo {
  /** The environment the tools run in (PATH, ANDROID_HOME…); default process.env. */
  env?: NodeJS.ProcessEnv;
  out: (text: string) => void;
  err: (text: string) => void;
}

export async function doctorCommand(args: readonly string[], io: DoctorCommandIo): Promise<number> {
  const parser = yargs([...args])
    .scriptName('simlock-agent doctor')
    .usage(
      '$0 --config agent.yaml [--fix] [-o json]\n\n' +
        "Compares the agent's own devices and files with what the tools list and reports; --fix " +
        'deletes its leftovers, takes in what is its own and removes stale files. Nothing ' +
        "outside the agent's own place is touched. Exit: 0 healthy or all fixed, 1 problems " +
        'left, 2 config error or --fix refused (an agent runs on the data directory).',
    )
    .option('config', { type: 'string', describe: 'the agent config file (YAML or JSON)' })
    .option('driver', { type: 'array', string: true, describe: 'simctl, devicectl, adb, fake' })
    .option('fix', { type: 'boolean', default: false, describe: 'repair what is the agent’s' })
    .option('output', { alias: 'o', choices: ['table', 'json'] as const, default: 'table' })
    .strict()
    .exitProcess(false)
    .fail((message, error) => {
      throw error ?? new AgentConfigError(message);
    })
    .help(false)
    .version(false);
  if (args.includes('--help') || args.includes('-h')) {
    parser.showHelp((text) => io.out(`${text}\n`));
    return 0;
  }
  let argv;
  try {
    argv = await parser.parseAsync();
  } catch (error) {
    io.err(`simlock-agent doctor: ${(error as Error).message}\n`);
    return 2;
  }

  let driver: Driver | undefined;
  let dataDir: string;
  try {
    // The Worker's name is the daemon's business; a doctor run needs none.
    const config = await loadAgentConfig({
      ...(argv.config ? { path: argv.config } : {}),
      flags: { name: 'doctor', ...(argv.driver ? { drivers: argv.driver } : {}) },
    });
    dataDir = resolveDataDir({ dataDir: config.dataDir, ...(io.env ? { env: io.env } : {}) });
    driver = await createDriver(config, {
      clock: systemClock(),
      dataDir,
      ...(io.env ? { env: io.env } : {}),
    });
  } catch (error) {
    io.err(`simlock-agent doctor: ${(error as Error).message}\n`);
    return 2;
  }
  try {
    const run = await runDoctor({ dataDir, driver, fix: argv.fix });
    io.out(argv.output === 'json' ? doctorJson(run) : doctorTable(run));
    return doctorExitCode(run);
  } catch (error) {
    if (!(error instanceof DoctorRefusal)) throw error;
    io.err(`simlock-agent doctor: ${error.message}\n`);
    return 2;
  }
}
