// What the fake driver runs for an exec: a real child process (node) that prints the argv the real
// driver would have run, aimed at the leased device, and answers as the script says for that tool
// (a screenshot to stdout answers a real PNG). Apart from fake.ts because it is pure: it needs the
// script's tool answers only, none of the fake's devices or power states.
import { adbExecArgv } from '../adb/adb-output.js';
import { devicectlExecArgv } from '../devicectl/devicectl.js';
import { checkExecArgs, checkToolFits, type DriverDevice, type ExecPlan } from '../driver.js';
import { simctlExecArgv } from '../simctl/simctl.js';
import { FAKE_SCREENSHOT_PNG, isScreenshotToStdout } from './fake-screenshot.js';
import { FAKE_TOOL_SOURCE } from './fake-tool.js';
import { FakeToolAnswer, type FakeScript } from './fake-script.js';

export function fakeExecArgv(
  tools: FakeScript['tools'],
  tool: string,
  args: readonly string[],
  device: DriverDevice,
): ExecPlan {
  const refusal = checkToolFits(tool, device) ?? checkExecArgs(args);
  if (refusal) return refusal;
  // The argv the real driver would run; the fake prints it instead.
  const real =
    tool === 'simctl'
      ? simctlExecArgv(args, device)
      : tool === 'devicectl'
        ? devicectlExecArgv(args, device)
        : adbExecArgv(args, device.id);
  if (!real.ok) return real;
  const printed = real.argv[0] === 'xcrun' ? real.argv.slice(1) : real.argv;
  const scripted = tools[tool as keyof FakeScript['tools']] ?? FakeToolAnswer.parse({});
  // A screenshot to stdout answers a real PNG, alone on stdout, as the real tools do.
  const answer = isScreenshotToStdout(tool, args)
    ? { ...scripted, stdout: '', stdoutBase64: FAKE_SCREENSHOT_PNG.toString('base64') }
    : scripted;
  return {
    ok: true,
    argv: [process.execPath, '-e', FAKE_TOOL_SOURCE, '--', JSON.stringify(answer), ...printed],
  };
}
