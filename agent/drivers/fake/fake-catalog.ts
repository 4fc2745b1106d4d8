// The catalog the fake driver lists: the script's models and runtimes, what it can make, and the
// model and runtime of each virtual device it has. Apart from fake.ts because it is pure: it
// works on a listing, and holds none of the fake's state.
import type { Catalog, Platform } from '../../../api/index.js';
import type { DriverDevice, MakeableModel } from '../driver.js';
import type { FakeScript } from './fake-script.js';

export function fakeCatalog(
  script: FakeScript,
  platforms: readonly Platform[],
  devices: DriverDevice[],
  makeable: MakeableModel[],
): Catalog {
  const models = new Map<string, Catalog['models'][number]>();
  for (const model of script.models) models.set(`${model.platform}/${model.name}`, model);
  const runtimes = new Map<string, Catalog['runtimes'][number]>();
  for (const runtime of script.runtimes) {
    runtimes.set(`${runtime.platform}/${runtime.version}`, runtime);
  }
  // What can be made is offered as the devices that exist are.
  for (const entry of makeable) {
    models.set(`${entry.platform}/${entry.model}`, {
      name: entry.model,
      platform: entry.platform,
      class: entry.class,
    });
    for (const os of entry.os)
      runtimes.set(`${entry.platform}/${os}`, { platform: entry.platform, version: os });
  }
  // Virtual devices bring their model and runtime; physical ones are matched by device.
  for (const device of devices) {
    if (device.physical) continue;
    const modelKey = `${device.platform}/${device.model}`;
    if (!models.has(modelKey)) {
      models.set(modelKey, {
        name: device.model,
        platform: device.platform,
        class: device.class,
      });
    }
    runtimes.set(`${device.platform}/${device.os}`, {
      platform: device.platform,
      version: device.os,
    });
  }
  return {
    platforms: [...platforms],
    models: [...models.values()].slice(0, 256),
    runtimes: [...runtimes.values()].slice(0, 256),
  };
}
