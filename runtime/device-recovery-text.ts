// How people read a leased device's recovery after a crash (api/device-recovery.ts): what crashed,
// why, and when it should be back. One wording for the controller's Events, the plugin's
// `lease --hold` lines, the client's and the MCP server's notifications, and the console. Pure.
import type { DeviceRecovery, GrantedDevice } from '../api/index.js';
import { estimateText } from './grant-progress-text.js';

/** "device iPhone 17 (1A2B…)": the granted device as the holder knows it; "the device" if unknown. */
export function recoveringDevice(device: Pick<GrantedDevice, 'name' | 'id'> | undefined): string {
  if (device === undefined) return 'the device';
  return `device ${device.name} (${device.id})`;
}

/**
 * "device iPhone 17 (1A2B…) crashed (shut down): booting it again, back in about 40 s"; from the
 * second crash within the window, how many more the lease can take ("crash 2 of 3: the 3rd ends
 * the lease").
 */
export function recoveringText(
  recovery: Pick<DeviceRecovery, 'cause' | 'estimatedSeconds' | 'crashes' | 'crashBudget'>,
  device: Pick<GrantedDevice, 'name' | 'id'> | undefined,
): string {
  const estimate = estimateText(recovery);
  const back = estimate !== undefined ? `, back in ${estimate}` : '';
  const budget =
    recovery.crashes > 1 && recovery.crashBudget > 0
      ? ` (crash ${recovery.crashes} of ${recovery.crashBudget}: the ${ordinal(recovery.crashBudget)} ends the lease)`
      : '';
  return `${recoveringDevice(device)} crashed (${recovery.cause}): booting it again${back}${budget}`;
}

/** "device iPhone 17 (1A2B…) is back after its crash (shut down)": the cause when known. */
export function recoveredText(
  device: Pick<GrantedDevice, 'name' | 'id'> | undefined,
  cause?: string,
): string {
  const why = cause !== undefined && cause.length > 0 ? ` (${cause})` : '';
  return `${recoveringDevice(device)} is back after its crash${why}`;
}

/** "back in about 40 s" (or "booting again" with no estimate): the console's short line. */
export function recoveryEstimateText(recovery: Pick<DeviceRecovery, 'estimatedSeconds'>): string {
  const estimate = estimateText(recovery);
  return estimate !== undefined ? `back in ${estimate}` : 'booting again';
}

function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  switch (n % 10) {
    case 1:
      return `${n}st`;
    case 2:
      return `${n}nd`;
    case 3:
      return `${n}rd`;
    default:
      return `${n}th`;
  }
}
