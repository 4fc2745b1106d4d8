// The drivers a config names, as one Driver.
import type { Clock } from '../../runtime/index.js';
import type { AgentConfig } from '../config.js';
import { AdbDriver } from './adb/adb.js';
import { createCommandRunner, createDetachedSpawner } from './command.js';
import { CombinedDriver } from './combined.js';
import { DevicectlDriver } from './devicectl/devicectl.js';
import type { Driver } from './driver.js';
import { FakeDriver } from './fake/fake.js';
import { SimctlDriver } from './simctl/simctl.js';

export interface CreateDriverOptions {
  clock: Clock;
  /** The environment the tools run in (PATH, DEVELOPER_DIR, ANDROID_HOME…). */
  env?: NodeJS.ProcessEnv;
  /** The agent's data directory (resolveDataDir): its own simulator set and AVD home are in it. */
  dataDir?: string;
}

export async function createDriver(
  config: Pick<AgentConfig, 'drivers' | 'fakeScript' | 'bootTimeoutMs'> &
    Partial<Pick<AgentConfig, 'simctl' | 'adb' | 'provision'>>,
  options: CreateDriverOptions,
): Promise<Driver> {
  const run = createCommandRunner({ env: options.env ?? process.env });
  const drivers: Driver[] = [];
  for (const kind of config.drivers) {
    switch (kind) {
      case 'simctl':
        if (options.dataDir === undefined) {
          throw new Error(
            'the simctl driver needs the agent data directory (dataDir): its simulator set and its record of created simulators live there',
          );
        }
        drivers.push(
          new SimctlDriver({
            run,
            bootTimeoutMs: config.bootTimeoutMs,
            dataDir: options.dataDir,
            deviceSet: config.simctl?.deviceSet,
            adopt: config.simctl?.adopt,
            provision: config.provision,
          }),
        );
        break;
      case 'devicectl':
        drivers.push(new DevicectlDriver({ run }));
        break;
      case 'adb':
        if (options.dataDir === undefined) {
          throw new Error('the adb driver needs the data directory (dataDir): its AVDs live there');
        }
        drivers.push(
          new AdbDriver({
            dataDir: options.dataDir,
            run,
            spawnDetached: createDetachedSpawner(options.env ?? process.env),
            env: options.env ?? process.env,
            clock: options.clock,
            bootTimeoutMs: config.bootTimeoutMs,
            ...(config.adb === undefined ? {} : { adb: config.adb }),
            ...(config.provision === undefined ? {} : { provision: config.provision }),
          }),
        );
        break;
      case 'fake':
        if (config.fakeScript === undefined) throw new Error('the fake driver needs fakeScript');
        drivers.push(await FakeDriver.fromFile(config.fakeScript, { clock: options.clock }));
        break;
    }
  }
  return drivers.length === 1 ? drivers[0]! : new CombinedDriver(drivers);
}
