// The agent's configuration: a YAML (or JSON) file, with command-line flags over it. Every field
// is checked here, and an error names the field and where it came from.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SimlockError } from '../api/index.js';
import { TlsConfig, TunnelConfig } from './config-connection.js';
import { describeIssues } from './zod-errors.js';

export const DriverKind = z.enum(['simctl', 'devicectl', 'adb', 'fake']);
export type DriverKind = z.infer<typeof DriverKind>;

export const ReclaimPolicy = z
  .enum(['erase-keep-warm', 'erase', 'shutdown'])
  .describe(
    'What happens to a simulator or emulator after its lease: erased and booted again (warm), erased and left shut down, or only shut down (its data stays for the next holder).',
  );
export type ReclaimPolicy = z.infer<typeof ReclaimPolicy>;

// A Kubernetes object name (DNS-1123 subdomain); short enough that `worker-<name>` also fits.
const objectName = z
  .string()
  .max(240)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
    message: 'must be lower-case letters, digits, "-" or ".", starting and ending alphanumeric',
  });
const namespaceName = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: 'must be a DNS label (a-z, 0-9, "-")' });
const megabytes = z.number().int().min(1).max(4_194_304);
const milliseconds = (min: number, max: number, fallback: number) =>
  z.number().int().min(min).max(max).default(fallback);

export const PlatformLimits = z.strictObject({
  running: z
    .number()
    .int()
    .min(0)
    .max(256)
    .describe('How many simulators or emulators of this platform may run at once.'),
  ramBudgetMb: megabytes
    .optional()
    .describe('RAM the running ones of this platform may use together; none: no RAM limit.'),
  ramPerDeviceMb: megabytes
    .default(2048)
    .describe('RAM one running device of this platform costs, unless its model says otherwise.'),
});
export type PlatformLimits = z.infer<typeof PlatformLimits>;

export const Limits = z.strictObject({
  running: z
    .number()
    .int()
    .min(0)
    .max(256)
    .default(4)
    .describe('How many simulators and emulators may run at once, all platforms together.'),
  platforms: z
    .strictObject({ ios: PlatformLimits.optional(), android: PlatformLimits.optional() })
    .default({}),
  modelRamMb: z
    .record(z.string().min(1).max(128), megabytes)
    .default({})
    .describe('RAM one running device of a model costs (model name, any case).'),
});
export type Limits = z.infer<typeof Limits>;

export const AgentConfig = z
  .strictObject({
    name: objectName.describe('The Worker this agent reports as.'),
    label: z.string().max(63).optional().describe('Display name for the Worker.'),
    labels: z
      .record(z.string().min(1).max(253), z.string().max(63))
      .default({})
      .describe('Kubernetes labels put on the Worker (e.g. a fleet a controller selects).'),
    namespace: namespaceName
      .default('simlock-system')
      .describe('Where the heartbeat Lease (worker-<name>) lives.'),
    drivers: z
      .array(DriverKind)
      .min(1)
      .max(4)
      .refine((kinds) => new Set(kinds).size === kinds.length, { message: 'lists a driver twice' }),
    fakeScript: z.string().min(1).max(4096).optional().describe('The fake driver script file.'),
    dataDir: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe(
        'Where the agent keeps what it owns: its simulator set, its AVDs, its records. Default: $XDG_DATA_HOME/simlock-agent, else ~/.local/share/simlock-agent (~/Library/Application Support/simlock-agent on macOS).',
      ),
    simctl: z
      .strictObject({
        deviceSet: z
          .enum(['own', 'default-recorded'])
          .default('own')
          .describe(
            "own: the agent's simulators live in a device set of its own (<dataDir>/simctl-set), every simctl call names it. default-recorded: they live in the user's default set (for CI that runs plain xcodebuild), named simlock-…, and the agent touches only the UDIDs it recorded creating.",
          ),
        adopt: z
          .array(z.string().min(1).max(128))
          .max(256)
          .default([])
          .describe(
            "Simulators of the user's default set the agent may also lease, boot and erase (UDIDs): an explicit opt-in per device.",
          ),
      })
      .default({ deviceSet: 'own', adopt: [] }),
    adb: z
      .strictObject({
        serverPort: z
          .number()
          .int()
          .min(1024)
          .max(65_535)
          .default(5137)
          .describe(
            'The adb server the agent starts for its own emulators, apart from the one a person on the host uses (5037); phones stay on theirs.',
          ),
        adopt: z
          .array(z.string().min(1).max(128))
          .max(256)
          .default([])
          .describe(
            "AVDs outside the agent's own AVD home (<dataDir>/avd) that it may also lease, boot and wipe (AVD names): an explicit opt-in per device.",
          ),
      })
      .default({ serverPort: 5137, adopt: [] }),
    provision: z
      .strictObject({
        enabled: z
          .boolean()
          .default(true)
          .describe(
            'Make a device when a lease wants a model the host can make and has none free.',
          ),
        models: z
          .array(z.string().min(1).max(128))
          .max(256)
          .default([])
          .describe('The models offered (any case); empty: every one the tools can make.'),
        os: z
          .array(z.string().min(1).max(32))
          .max(64)
          .default([])
          .describe(
            'The OS versions (API levels on Android) devices are made with; empty: every installed one.',
          ),
      })
      .default({ enabled: true, models: [], os: [] }),
    idle: z
      .strictObject({
        shutdownAfterSeconds: z
          .number()
          .int()
          .min(1)
          .max(31_536_000)
          .default(600)
          .describe('A booted device nobody leases is shut down after this long.'),
        deleteAfterSeconds: z
          .number()
          .int()
          .min(1)
          .max(31_536_000)
          .default(86_400)
          .describe('A device the agent made, shut down and unused this long, is deleted.'),
        warm: z
          .record(z.string().min(1).max(128), z.number().int().min(0).max(64))
          .default({})
          .describe(
            'Devices kept booted (and never deleted) per model (any case), for fast grants.',
          ),
      })
      .default({ shutdownAfterSeconds: 600, deleteAfterSeconds: 86_400, warm: {} }),
    quarantine: z
      .strictObject({
        retryBackoffSeconds: z
          .array(z.number().int().min(1).max(604_800))
          .max(16)
          .default([60, 300, 1800])
          .describe(
            'A quarantined simulator or emulator is tried again (booted and checked) after each of these waits in turn; once they are used up, a device the agent made is deleted and any other waits for an operator (kubectl simlock device unquarantine). Empty: never retried.',
          ),
      })
      .default({ retryBackoffSeconds: [60, 300, 1800] }),
    disk: z
      .strictObject({
        lowBelowGiB: z
          .number()
          .int()
          .min(0)
          .max(100_000)
          .default(10)
          .describe(
            'Below this much free space where its devices live, the agent makes no device and deletes its idle ones first.',
          ),
      })
      .default({ lowBelowGiB: 10 }),
    limits: Limits.optional().describe(
      "How many devices may run and the RAM they may use; none: derived from the host's cores and memory (docs/adr/0021).",
    ),
    reclaim: ReclaimPolicy.default('erase-keep-warm'),
    capabilities: z
      .array(z.string().min(1).max(63))
      .max(64)
      .default([])
      .describe('Capabilities this host offers (requires: in a request).'),
    probeIntervalMs: milliseconds(100, 3_600_000, 10_000).describe(
      'How often every physical device is read for presence.',
    ),
    refreshIntervalMs: milliseconds(500, 3_600_000, 15_000).describe(
      'How often the drivers list devices.',
    ),
    healthIntervalMs: milliseconds(500, 3_600_000, 30_000),
    viewDebounceMs: milliseconds(0, 60_000, 1000).describe(
      'At most one Worker status write per this time: a change after a quiet spell is written at once, changes within it of a write are folded into one.',
    ),
    viewTakenDelayMs: milliseconds(0, 60_000, 5000).describe(
      'A view whose only change is devices taken by fleet leases (which the controller counts meanwhile) is written this long after the first such change, with what follows; 0: as any other change (docs/adr/0029).',
    ),
    bootTimeoutMs: milliseconds(1000, 3_600_000, 300_000),
    heartbeat: z
      .strictObject({
        durationSeconds: z.number().int().min(5).max(3600).default(40),
        renewEverySeconds: z.number().int().min(1).max(3600).default(10),
      })
      .refine((heartbeat) => heartbeat.renewEverySeconds < heartbeat.durationSeconds, {
        message: 'renewEverySeconds must be shorter than durationSeconds',
        path: ['renewEverySeconds'],
      })
      .default({ durationSeconds: 40, renewEverySeconds: 10 }),
    listen: z
      .strictObject({
        host: z.string().min(1).max(253).default('0.0.0.0'),
        port: z.number().int().min(0).max(65_535).default(8780),
      })
      .default({ host: '0.0.0.0', port: 8780 }),
    endpoint: z
      .url({ protocol: /^https?$/ })
      .max(512)
      .optional()
      .describe(
        'The exec URL the proxy reaches this agent at, as written in the Worker: https:// when tls is set.',
      ),
    tls: TlsConfig,
    tunnel: TunnelConfig,
    exec: z
      .strictObject({
        defaultTimeoutSeconds: z.number().int().min(1).max(86_400).default(600),
        maxTimeoutSeconds: z.number().int().min(1).max(86_400).default(3600),
      })
      .refine((exec) => exec.defaultTimeoutSeconds <= exec.maxTimeoutSeconds, {
        message: 'defaultTimeoutSeconds must not exceed maxTimeoutSeconds',
        path: ['defaultTimeoutSeconds'],
      })
      .default({ defaultTimeoutSeconds: 600, maxTimeoutSeconds: 3600 }),
    localQueue: z
      .strictObject({ maxEntries: z.number().int().min(0).max(10_000).default(100) })
      .default({ maxEntries: 100 }),
    local: z
      .strictObject({
        host: z.string().min(1).max(253).default('127.0.0.1'),
        port: z.number().int().min(0).max(65_535).default(8781),
      })
      .default({ host: '127.0.0.1', port: 8781 })
      .describe('The local leasing API, for programs on this host (loopback only by default).'),
    execAllowedIdentities: z
      .array(z.string().min(1).max(1024))
      .max(16)
      .default(['system:serviceaccount:simlock-system:simlock-proxy'])
      .describe('Users (as TokenReview names them) whose exec calls the agent runs: the proxy.'),
  })
  .refine((config) => !config.drivers.includes('fake') || config.fakeScript !== undefined, {
    message: 'the fake driver needs fakeScript',
    path: ['fakeScript'],
  })
  // The endpoint says how the proxy dials: http:// to a server that speaks only TLS fails every
  // exec, so it is refused here, where the setting is. (https:// without tls is a TLS-terminating
  // reverse proxy in front of the agent.)
  .refine(
    (config) =>
      config.endpoint === undefined ||
      config.tls === undefined ||
      config.endpoint.startsWith('https:'),
    { message: 'must be https:// when tls is set', path: ['endpoint'] },
  );
export type AgentConfig = z.infer<typeof AgentConfig>;

export type AgentConfigInput = z.input<typeof AgentConfig>;

export class AgentConfigError extends SimlockError {
  constructor(message: string) {
    super('USAGE', message);
    this.name = 'AgentConfigError';
  }
}

type Tree = Record<string, unknown>;

function isTree(value: unknown): value is Tree {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function camelCase(key: string): string {
  return key.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * Flags as a parser such as yargs gives them (`--limits.running 4` → {limits: {running: 4}}):
 * its bookkeeping keys (`_`, `$0`) go, kebab-case keys become camelCase, undefined values go.
 */
export function normalizeFlags(flags: unknown): Tree {
  if (!isTree(flags)) return {};
  const result: Tree = {};
  for (const [key, value] of Object.entries(flags)) {
    if (key === '_' || key === '$0' || value === undefined) continue;
    result[camelCase(key)] = isTree(value) ? normalizeFlags(value) : value;
  }
  return result;
}

function deepMerge(base: Tree, over: Tree): Tree {
  const merged: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = merged[key];
    merged[key] = isTree(current) && isTree(value) ? deepMerge(current, value) : value;
  }
  return merged;
}

/** The config from a parsed file and flags (flags win, field by field). */
export function parseAgentConfig(
  file: unknown,
  flags: unknown = {},
  source = 'agent config',
): AgentConfig {
  if (file !== undefined && file !== null && !isTree(file)) {
    throw new AgentConfigError(`${source} must be a mapping of fields`);
  }
  const merged = deepMerge(isTree(file) ? file : {}, normalizeFlags(flags));
  const parsed = AgentConfig.safeParse(merged);
  if (!parsed.success) {
    throw new AgentConfigError(describeIssues(parsed.error, `${source} (file and flags)`));
  }
  return parsed.data;
}

/** Reads the config file (YAML or JSON), if any, and applies the flags over it. */
export async function loadAgentConfig(options: {
  path?: string;
  flags?: unknown;
}): Promise<AgentConfig> {
  let file: unknown;
  if (options.path !== undefined) {
    let text: string;
    try {
      text = await readFile(options.path, 'utf8');
    } catch (error) {
      throw new AgentConfigError(`cannot read ${options.path}: ${(error as Error).message}`);
    }
    try {
      file = parseYaml(text);
    } catch (error) {
      throw new AgentConfigError(`${options.path} is not YAML: ${(error as Error).message}`);
    }
  }
  return parseAgentConfig(file, options.flags, options.path ?? 'flags');
}
