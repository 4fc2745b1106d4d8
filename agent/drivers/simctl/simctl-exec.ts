// What a lease holder may run with simctl, and the argv that runs it: `xcrun simctl`, the set the
// simulator lives in as a global option (before the subcommand), the subcommand, then the UDID.
import {
  checkExecArgs,
  checkToolFits,
  refuseTool,
  type DriverDevice,
  type ExecPlan,
} from '../driver.js';

/**
 * The simctl subcommands a lease holder may run: each takes the device as its first argument, so
 * `simctl <subcommand> <args…>` becomes `xcrun simctl [--set <dir>] <subcommand> <udid> <args…>`.
 * Lifecycle subcommands (boot, shutdown, erase, delete, clone, create, rename, upgrade) and ones
 * that read other devices (list) stay with the agent.
 */
export const SIMCTL_DEVICE_SUBCOMMANDS = [
  'addmedia',
  'appinfo',
  'get_app_container',
  'getenv',
  'icloud_sync',
  'install',
  'io',
  'keychain',
  'launch',
  'listapps',
  'location',
  'logverbose',
  'openurl',
  'pbcopy',
  'pbpaste',
  'privacy',
  'push',
  'spawn',
  'status_bar',
  'terminate',
  'ui',
  'uninstall',
] as const;

/** `xcrun simctl`, aimed at a device set (a global option: before the subcommand) or the default. */
export function simctl(set: string | undefined): [string, ...string[]] {
  return set === undefined ? ['xcrun', 'simctl'] : ['xcrun', 'simctl', '--set', set];
}

/** The holder's argv; `set` is the device set the simulator lives in (none: the default set). */
export function simctlExecArgv(
  args: readonly string[],
  device: DriverDevice,
  set?: string,
): ExecPlan {
  const refusal = checkToolFits('simctl', device) ?? checkExecArgs(args);
  if (refusal) return refusal;
  const [subcommand, ...rest] = args;
  if (subcommand === undefined) return refuseTool('simctl needs a subcommand, e.g. launch');
  if (!(SIMCTL_DEVICE_SUBCOMMANDS as readonly string[]).includes(subcommand)) {
    return refuseTool(
      `simctl ${subcommand} is not allowed on a lease; allowed: ${SIMCTL_DEVICE_SUBCOMMANDS.join(', ')}`,
    );
  }
  return { ok: true, argv: [...simctl(set), subcommand, device.id, ...rest] };
}
