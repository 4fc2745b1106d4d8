// What to make for a virtual request no device of the host can serve: the choice among what the
// drivers can make, and that device as the capacity arithmetic sees it. Pure.
import { compareOsVersions, fitsDevice, type DeviceSpec } from '../api/index.js';
import type { DeviceToMake, MakeableModel } from './drivers/driver.js';
import type { PlannedDevice } from './planner.js';

/**
 * The device to make for a request, if the drivers can make one that fits: the newest OS the
 * request allows, then the first model by name (a request naming no model takes any that fits).
 */
export function chooseToMake(
  spec: DeviceSpec,
  makeable: readonly MakeableModel[],
): DeviceToMake | undefined {
  let best: DeviceToMake | undefined;
  for (const model of makeable) {
    for (const os of model.os) {
      const candidate = { platform: model.platform, model: model.model, class: model.class, os };
      if (!fitsDevice(spec, candidate)) continue;
      const better =
        best === undefined ||
        compareOsVersions(os, best.os) > 0 ||
        (compareOsVersions(os, best.os) === 0 && model.model.localeCompare(best.model) < 0);
      if (better) best = { platform: model.platform, model: model.model, os };
    }
  }
  return best;
}

/** A device to be made, as the capacity arithmetic sees it (its class from what can be made). */
export function newDevice(want: DeviceToMake, makeable: readonly MakeableModel[]): PlannedDevice {
  const model = makeable.find(
    (entry) => entry.platform === want.platform && entry.model === want.model,
  );
  return {
    id: `new ${want.model}`,
    name: want.model,
    model: want.model,
    platform: want.platform,
    os: want.os,
    physical: false,
    class: model?.class ?? 'phone',
    state: 'shutdown',
  };
}
