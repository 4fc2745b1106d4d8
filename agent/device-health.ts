// What the holder of a lease is told about its device's health while crash recovery
// (crash-recovery.ts) boots it again or loses the lease: the shape the Lease's status takes, and
// the words of its condition and of an exec refused meanwhile. Pure: the clock's now is passed in.
import type { Condition, DeviceRecovery } from '../api/index.js';
import { DEVICE_RECOVERING } from '../api/index.js';
import type { CrashRule } from './crash-budget.js';

/** What the holder is to be told about a lease's device, as the Lease's status should say it. */
export interface LeaseDeviceHealth {
  /** While the device is booted again; null once it is back (clears the status field). */
  recovery: DeviceRecovery | null;
  /** The DeviceRecovering condition; absent while the device never crashed. */
  condition?: Condition;
  /** The lease is lost (past the crash budget, the device would not boot again, or is gone): why. */
  lost?: string;
}

/** When a device being booted again should be back, as a holder reads it. */
export function backIn(recovery: DeviceRecovery, nowMs: number): string {
  if (recovery.estimatedSeconds === undefined) return 'back when it has booted';
  const due = Date.parse(recovery.since) + recovery.estimatedSeconds * 1000;
  const left = Math.ceil((due - nowMs) / 1000);
  return left > 0
    ? `back in about ${left} s`
    : `it is taking longer than the usual ${recovery.estimatedSeconds} s`;
}

/** The crash budget's window in words ("10 minutes"). */
export function windowText(rule: CrashRule): string {
  const minutes = rule.windowMs / 60_000;
  return Number.isInteger(minutes)
    ? `${minutes} minute${minutes === 1 ? '' : 's'}`
    : `${Math.round(rule.windowMs / 1000)} s`;
}

/** The Lease's DeviceRecovering condition. */
export function recoveringCondition(
  status: 'True' | 'False',
  reason: 'DeviceCrashed' | 'DeviceRecovered',
  message: string,
  nowMs: number,
): Condition {
  return {
    type: DEVICE_RECOVERING,
    status,
    reason,
    message: message.slice(0, 1024),
    lastTransitionTime: new Date(nowMs).toISOString(),
  };
}

/** What the tools listing a leased device down means, by platform. */
export function downCause(platform: string): string {
  return platform === 'android' ? 'emulator process exited' : 'shut down';
}
