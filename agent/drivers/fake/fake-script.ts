// The script of the fake driver (tests, e2e and the demo): devices, catalog, boot time, presence
// over time, failures, and what each tool answers. YAML or JSON, validated here.
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DeviceClass, Platform, PresenceReason } from '../../../api/index.js';
import { describeIssues } from '../../zod-errors.js';
import { DriverError } from '../driver.js';

const ScriptedPresence = z
  .object({ present: z.boolean(), reason: PresenceReason.optional() })
  .refine((presence) => presence.present === (presence.reason === undefined), {
    message: 'reason is required when not present, and not allowed when present',
  });

export const FakeDevice = z.object({
  id: z.string().min(1).max(128),
  name: z.string().max(128).optional(),
  model: z.string().min(1).max(128),
  platform: Platform,
  os: z.string().min(1).max(32),
  physical: z.boolean().default(false),
  class: DeviceClass.optional().describe('Default: tablet when the model says iPad or tablet.'),
  booted: z.boolean().default(false).describe('A simulator or emulator already running at start.'),
  presence: ScriptedPresence.optional().describe('Physical only; default present.'),
  presenceTimeline: z
    .array(ScriptedPresence.and(z.object({ atMs: z.number().int().min(0) })))
    .max(100)
    .default([])
    .describe('Presence from atMs after the driver starts (physical only).'),
});
export type FakeDevice = z.infer<typeof FakeDevice>;

export const FakeToolAnswer = z.object({
  exitCode: z.number().int().min(0).max(255).default(0),
  stdout: z.string().max(65_536).default(''),
  stdoutRepeat: z
    .number()
    .int()
    .min(1)
    .max(65_536)
    .default(1)
    .describe('Prints stdout this many times: a large output (bench/tunnel-exec.ts).'),
  stderr: z.string().max(65_536).default(''),
  delayMs: z.number().int().min(0).max(600_000).default(0).describe('Runs this long first.'),
});
export type FakeToolAnswer = z.infer<typeof FakeToolAnswer>;

const TimeWindow = z
  .object({ fromMs: z.number().int().min(0), toMs: z.number().int().min(0) })
  .refine((window) => window.toMs >= window.fromMs, { message: 'toMs must not be before fromMs' });

export const FakeScript = z.object({
  platforms: z.array(Platform).max(2).optional().describe('Default: the platforms of the devices.'),
  models: z
    .array(z.object({ name: z.string().min(1).max(128), platform: Platform, class: DeviceClass }))
    .max(256)
    .default([]),
  runtimes: z
    .array(z.object({ platform: Platform, version: z.string().min(1).max(32) }))
    .max(256)
    .default([]),
  devices: z.array(FakeDevice).max(512).default([]),
  makeable: z
    .array(
      z.object({
        platform: Platform,
        model: z.string().min(1).max(128),
        class: DeviceClass.optional().describe(
          'Default: tablet when the model says iPad or tablet.',
        ),
        os: z.array(z.string().min(1).max(32)).min(1).max(64),
        bootMs: z
          .number()
          .int()
          .min(0)
          .max(600_000)
          .optional()
          .describe('How long a device made of it takes to boot; default bootMs.'),
      }),
    )
    .max(256)
    .default([])
    .describe('Models the fake can make a device of, with their OS versions.'),
  bootMs: z.number().int().min(0).max(600_000).default(1000),
  provisionMs: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(1000)
    .describe('How long making a device takes.'),
  failures: z
    .object({
      unhealthy: z.boolean().default(false),
      unhealthyWindows: z.array(TimeWindow).max(100).default([]),
      boot: z.array(z.string()).max(512).default([]).describe('Device ids whose boot fails.'),
      erase: z.array(z.string()).max(512).default([]),
      presenceRead: z.array(z.string()).max(512).default([]).describe('Reads that throw.'),
      list: z.boolean().default(false).describe('listDevices throws.'),
      create: z.array(z.string()).max(256).default([]).describe('Models whose making fails.'),
      check: z
        .array(z.string())
        .max(512)
        .default([])
        .describe('Device ids whose per-device check (checkDevice) fails while booted.'),
    })
    .default({
      unhealthy: false,
      unhealthyWindows: [],
      boot: [],
      erase: [],
      presenceRead: [],
      list: false,
      create: [],
      check: [],
    }),
  tools: z
    .object({
      simctl: FakeToolAnswer.optional(),
      devicectl: FakeToolAnswer.optional(),
      adb: FakeToolAnswer.optional(),
    })
    .default({}),
});
export type FakeScript = z.infer<typeof FakeScript>;
export type FakeScriptInput = z.input<typeof FakeScript>;

export function parseFakeScript(value: unknown, source = 'fake driver script'): FakeScript {
  const parsed = FakeScript.safeParse(value);
  if (!parsed.success) throw new DriverError(describeIssues(parsed.error, source));
  const ids = new Set<string>();
  for (const device of parsed.data.devices) {
    if (ids.has(device.id))
      throw new DriverError(`${source}: device id ${device.id} is listed twice`);
    ids.add(device.id);
  }
  return parsed.data;
}

/** Reads a script file: YAML, of which JSON is a subset. */
export async function readFakeScript(path: string): Promise<FakeScript> {
  const text = await readFile(path, 'utf8');
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new DriverError(`${path}: not YAML or JSON`, { cause: error });
  }
  return parseFakeScript(value, path);
}

/**
 * The script file of a running fake, read again when its modification time changes: how the e2e
 * tests and the demo plug a phone out and back in, or remove a device, while the agent runs.
 */
export class FollowedScriptFile {
  readonly path: string;
  #modified: number | undefined;

  constructor(path: string) {
    this.path = path;
    try {
      this.#modified = statSync(path).mtimeMs;
    } catch {
      this.#modified = undefined;
    }
  }

  /** The script the file holds now if it changed since the last look; undefined otherwise. */
  changed(): FakeScript | undefined {
    let modified: number;
    try {
      modified = statSync(this.path).mtimeMs;
    } catch {
      return undefined;
    }
    if (this.#modified === undefined) {
      this.#modified = modified;
      return undefined;
    }
    if (modified === this.#modified) return undefined;
    this.#modified = modified;
    try {
      return parseFakeScript(parseYaml(readFileSync(this.path, 'utf8')), this.path);
    } catch {
      // A half-written file: keep the script we have; the next change reads it again.
      this.#modified = undefined;
      return undefined;
    }
  }
}
