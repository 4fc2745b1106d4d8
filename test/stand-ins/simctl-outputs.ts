// What real `xcrun simctl` prints when it refuses, as the stand-in prints it: the text, the exit
// code, and where each was read. simctl's errors are CoreSimulator errors; since Xcode 11 their
// code is 405 for "in current state" refusals and the process exits with the code modulo 256
// (405 → 149), which reports show for shutdown and boot. Anything not seen in a public report is
// marked as the stand-in's assumption. `{name}` placeholders are filled in by the stand-in.

export interface SimctlRefusal {
  stderr: string;
  exitCode: number;
  source: string;
}

const SIM_ERROR = 'An error was encountered processing the command';

/** The header simctl prints before the reason it could not create a device. */
const CANNOT_CREATE =
  'Unable to create a device for device type: {typeName} ({typeId}), runtime: {runtimeName} ({version} - {build}) - {runtimeId}\n';

export const SIMCTL_REFUSALS = {
  invalidDevice: {
    stderr: 'Invalid device: {udid}\n',
    exitCode: 148,
    source:
      'text: appium/appium#8146 ("simctl error running \'io\': Invalid device: <UDID>"); exit code: not found in public reports, the stand-in assumes 148',
  },
  invalidDeviceType: {
    stderr: 'Invalid device type: {arg}\n',
    exitCode: 161,
    source:
      'text: appium/appium#7126, #7786, #13499 (simctl create with an unknown device type); exit code: assumed the same as "Invalid runtime"',
  },
  invalidRuntime: {
    stderr: 'Invalid runtime: {arg}\n',
    exitCode: 161,
    source:
      'flutter/flutter#55743 (text and "Exit status: 161", Xcode 11.4), flutter/flutter#54892, element-hq/element-x-ios#5495 (2026)',
  },
  incompatible: {
    stderr: `${CANNOT_CREATE}${SIM_ERROR} (domain=com.apple.CoreSimulator.SimError, code=403):\n`,
    exitCode: 147,
    source:
      'Kotlin/Storytale#80 (an iPhone 6s Plus on iOS 18.4, 2025); exit code 403 modulo 256 by the pattern of 405 → 149',
  },
  diskFull: {
    stderr: `${CANNOT_CREATE}${SIM_ERROR} (domain=NSPOSIXErrorDomain, code=28):\nNo space left on device\n`,
    exitCode: 28,
    source:
      'composed: the create header of Kotlin/Storytale#80 and the NSPOSIXErrorDomain code=28 "No space left on device" simctl printed for install on a full disk (appium/appium#9309, #14398); not seen for create',
  },
  bootBooted: {
    stderr: `${SIM_ERROR} (domain=com.apple.CoreSimulator.SimError, code=405):\nUnable to boot device in current state: Booted\n`,
    exitCode: 149,
    source: 'okwasniewski/MiniSim#62 (2023, "Status code: 149", empty stdout)',
  },
  shutdownShutdown: {
    stderr: `${SIM_ERROR} (domain=com.apple.CoreSimulator.SimError, code=405):\nUnable to shutdown device in current state: Shutdown\n`,
    exitCode: 149,
    source:
      'public CI code that accepts exactly this stderr with exit code 149 and empty stdout (found by text search); Xcode 6–7 used codes 146 and 159 (FBSimulatorControl)',
  },
  eraseBooted: {
    stderr: `${SIM_ERROR} (domain=com.apple.CoreSimulator.SimError, code=405):\nUnable to erase contents and settings in current state: Booted\n`,
    exitCode: 149,
    source:
      'mac-cleanup/mac-cleanup-sh#69 (2021, code=405), #39 (2020, code=165); exit code by the 405 → 149 pattern',
  },
  lookupInState: {
    stderr: `${SIM_ERROR} (domain=com.apple.CoreSimulator.SimError, code=405):\nUnable to lookup in current state: {state}\n`,
    exitCode: 149,
    source:
      'text: inf2381/fastlane-plugin-maestro#8 (2025, launch on a simulator "Shutting Down", code=405); the same text for getenv and spawn on a Shutdown device is the stand-in\'s assumption; exit code by the 405 → 149 pattern',
  },
} satisfies Record<string, SimctlRefusal>;

export type SimctlRefusalName = keyof typeof SIMCTL_REFUSALS;

/** `bootstatus <udid> -b` on a device already up (a public log, Xcode 26.3). */
export const BOOTSTATUS_ALREADY_BOOTED =
  'Monitoring boot status for {name} ({udid}).\nDevice already booted, nothing to do.\n';

/** `bootstatus <udid> -b` that booted it (the shape of a public Xcode 26 log, times composed). */
export const BOOTSTATUS_BOOTED =
  'Monitoring boot status for {name} ({udid}).\n' +
  '[{time}] Status=4, isTerminal=NO, Elapsed=00:03.\n\tWaiting on System App\n\n' +
  '[{time}] Status=4294967295, isTerminal=YES, Elapsed=00:05.\n\tFinished\n\n';

/**
 * `getenv <udid> HOME` on a booted simulator: the device's data folder, `<set>/<udid>/data`
 * (a simulator's HOME is its data container; the stand-in prints its `dataPath`).
 */
export const GETENV_HOME = '{dataPath}\n';
