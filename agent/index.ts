// The agent's public surface (DESIGN.md §5): the pure core the Kubernetes wiring builds on, and
// the drivers. Other folders import the agent only through this file.
export { Listeners, Serializer, type Unsubscribe } from './listeners.js';
export {
  AgentConfig,
  AgentConfigError,
  DriverKind,
  Limits,
  PlatformLimits,
  ReclaimPolicy,
  loadAgentConfig,
  normalizeFlags,
  parseAgentConfig,
  type AgentConfigInput,
} from './config.js';
export {
  findRoom,
  isEvictable,
  isRunning,
  measureCapacity,
  plan,
  ramCostMb,
  waitingReasonFor,
  type AgentRefusal,
  type InventoryState,
  type Plan,
  type PlanInput,
  type PlannedDevice,
} from './planner.js';
export { Inventory, type PhysicalHeldState } from './inventory.js';
export { DeviceSteps } from './device-steps.js';
export { PresenceWatcher, type PresenceChange, type PresenceWatcherOptions } from './presence.js';
export {
  LeaseGranter,
  type GrantOutcome,
  type LeaseGranterOptions,
  type LeaseOrigin,
  type LeaseRecord,
  type ReclaimOutcome,
} from './granter.js';
export {
  LocalQueue,
  MAX_VIEW_QUEUE_ENTRIES,
  type LocalEntry,
  type LocalGrant,
  type LocalOutcome,
  type LocalRequest,
} from './local-queue.js';
export {
  AGENT_VERSION,
  buildWorkerStatus,
  HealthTracker,
  ViewDiffer,
  type ViewChange,
  type ViewSources,
} from './view.js';
export {
  execStream,
  startExec,
  type ExecEvent,
  type ExecHandle,
  type ExecOptions,
  type ExecResult,
} from './exec.js';
export { AgentCore, type AgentCoreOptions, type LocalLeaseRequest } from './core.js';
// The Kubernetes wiring, for programs that run agents in-process (benchmarks run hundreds in one).
export { ClusterAgent, type ClusterAgentOptions } from './cluster/agent.js';

// Drivers
export {
  checkToolFits,
  DriverError,
  isExecTool,
  type DeviceListing,
  type Driver,
  type DriverDevice,
  type ExecPlan,
  type ExecRefusalCode,
  type PowerState,
  type ResetBaseline,
} from './drivers/driver.js';
export {
  createCommandRunner,
  createDetachedSpawner,
  type CommandResult,
  type CommandRunner,
  type DetachedSpawner,
} from './drivers/command.js';
export { createDriver, type CreateDriverOptions } from './drivers/create.js';
export { CombinedDriver } from './drivers/combined.js';
export {
  SimctlDriver,
  parseSimctlList,
  SIMCTL_DEVICE_SUBCOMMANDS,
} from './drivers/simctl/simctl.js';
export {
  DevicectlDriver,
  parseDevicectlDevices,
  DEVICECTL_DEVICE_COMMANDS,
} from './drivers/devicectl/devicectl.js';
export { AdbDriver, type AdbDriverOptions } from './drivers/adb/adb.js';
export { parseDeviceProfiles, readSystemImages } from './drivers/adb/sdk-output.js';
export { parseAdbDevices, ADB_HOST_COMMANDS } from './drivers/adb/adb-output.js';
export { FakeDriver, type FakeOperation } from './drivers/fake/fake.js';
export {
  FakeScript,
  parseFakeScript,
  readFakeScript,
  type FakeScriptInput,
} from './drivers/fake/fake-script.js';
export {
  FAKE_SCREENSHOT_PNG,
  fakeScreenPng,
  isScreenshotToStdout,
} from './drivers/fake/fake-screenshot.js';
export { deriveLimits, readMachine, type MachineFigures } from './machine-limits.js';
export { StageTimings, DEFAULT_STAGE_MS, type StageEstimate } from './stage-timings.js';
