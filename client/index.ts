// The typed TypeScript client (`simlock/client`; docs/CLIENT.md), and the machinery the kubectl
// plugin and its MCP server share with it: reading objects parsed and bounded, following a
// request, holder sessions, release and extension. It imports only api/ and runtime/.
export {
  SimlockClient,
  type ClientOptions,
  type LeaseOptions,
  type LeaseSpecInput,
  type ListOptions,
} from './client.js';
export { LeaseHandle } from './handle.js';
export { connect, type ConnectOptions, type Connection } from './connect.js';
export { LeaseCancelledError, toSimlockError } from './errors.js';
export {
  ProxyAccess,
  execOnLease,
  screenshotOfLease,
  type ExecOptions,
  type ProxyOptions,
} from './exec.js';
export { extendLease, type ExtendBy, type Extended } from './extend.js';
export { HolderSession } from './holder-session.js';
export * from './kube.js';
export {
  requestLease,
  tryWithdraw,
  watchSecondsFor,
  type OwnerReference,
  type RequestLeaseOptions,
} from './lease.js';
export {
  progressLine,
  progressOf,
  workerLabels,
  type LeaseProgress,
  type WorkerWait,
} from './progress.js';
export {
  RecoveryTracker,
  watchRecovery,
  type DeviceRecoveryNotice,
  type WatchRecoveryOptions,
} from './recovery.js';
export { forceReleaseLease, releaseLease, type ReleaseOptions, type Released } from './release.js';
export { waitForEnd, type WaitOptions, type WaitOutcome } from './wait.js';
export { answerWhyOver, heldLeasesOf, readableLeases, whyWaiting, type WhyOptions } from './why.js';
export { leaseUses, type LeaseUse } from './lease-activity.js';
// The contract's error, codes and shapes, so that a program needs no second import.
export {
  ERRORS,
  SimlockError,
  reasonsByWorker,
  type ErrorCode,
  type ExecTool,
  type DeviceRecovery,
  type GrantProgress,
  type GrantStage,
  type GrantedDevice,
  type HeldLease,
  type LeaseActivity,
  type LeaseObject,
  type LeaseRequestObject,
  type WhyAnswer,
  type UnblockChange,
  type UnblockVerdict,
  type WorkerObject,
  type WorkerReason,
  type WorkerReasonItem,
} from '../api/index.js';
