// The one device match, shared by the controller (routing, admission) and the agent (planner):
// platform, model in any case, class (none means phone unless a model is named), OS exact or a
// range (an API level on Android). Also the catalog checks for virtual requests.
import type { Catalog, Device, DeviceClass, DeviceSpec, WorkerStatus } from './schemas.js';
import { PLATFORM_NAMES } from './reasons.js';

type Version = number[];

function parseVersion(text: string): Version | undefined {
  if (!/^[0-9]+(\.[0-9]+)*$/.test(text)) return undefined;
  return text.split('.').map(Number);
}

function compareVersions(a: Version, b: Version): number {
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  return 0;
}

type Operator = '>=' | '<=' | '>' | '<' | '=';
interface Comparison {
  operator: Operator;
  version: Version;
}

/** An OS spec: exact ("18.4": equal, missing parts read as 0) or a list of comparisons. */
export type OsConstraint =
  | { kind: 'exact'; version: Version; text: string }
  | { kind: 'range'; comparisons: Comparison[]; text: string };

export function parseOsSpec(text: string): OsConstraint | undefined {
  const parts = text.trim().split(/ +/);
  const comparisons: Comparison[] = [];
  for (const part of parts) {
    const found = /^(>=|<=|>|<|=)?(.+)$/.exec(part);
    const version = found?.[2] === undefined ? undefined : parseVersion(found[2]);
    if (!found || !version) return undefined;
    comparisons.push({ operator: (found[1] as Operator | undefined) ?? '=', version });
  }
  const only = comparisons[0];
  if (comparisons.length === 1 && only && only.operator === '=' && !/^=/.test(text.trim())) {
    return { kind: 'exact', version: only.version, text };
  }
  return { kind: 'range', comparisons, text };
}

/** Orders OS versions ("17.5" before "18.4", "33" before "34"); unreadable ones come first. */
export function compareOsVersions(a: string, b: string): number {
  const [left, right] = [parseVersion(a), parseVersion(b)];
  if (!left || !right) return (left ? 1 : 0) - (right ? 1 : 0) || a.localeCompare(b);
  return compareVersions(left, right);
}

export function osMatches(spec: string, deviceOs: string): boolean {
  const constraint = parseOsSpec(spec);
  const version = parseVersion(deviceOs);
  if (!constraint || !version) return false;
  if (constraint.kind === 'exact') return compareVersions(version, constraint.version) === 0;
  return constraint.comparisons.every(({ operator, version: bound }) => {
    const order = compareVersions(version, bound);
    switch (operator) {
      case '>=':
        return order >= 0;
      case '<=':
        return order <= 0;
      case '>':
        return order > 0;
      case '<':
        return order < 0;
      case '=':
        return order === 0;
    }
  });
}

/** The class a request asks for: its own, else phone unless it names a model (whose class rules). */
export function requestedClass(request: DeviceSpec): DeviceClass | undefined {
  return request.class ?? (request.model === undefined ? 'phone' : undefined);
}

// One collator for every comparison: localeCompare with options builds a new one on each call
// (microseconds each), and routing compares models for every worker and request.
const modelCollator = new Intl.Collator(undefined, { sensitivity: 'accent' });

function sameModel(a: string, b: string): boolean {
  return a === b || modelCollator.compare(a, b) === 0;
}

/** Does this device fit the request? Platform, model (any case), class, OS. */
export function fitsDevice(
  request: DeviceSpec,
  device: Pick<Device, 'platform' | 'model' | 'class' | 'os'>,
): boolean {
  if (device.platform !== request.platform) return false;
  if (request.model !== undefined && !sameModel(request.model, device.model)) return false;
  const wantedClass = requestedClass(request);
  if (wantedClass !== undefined && device.class !== wantedClass) return false;
  if (request.os !== undefined && !osMatches(request.os, device.os)) return false;
  return true;
}

/** A physical device that fits, in any state but deleted. */
export function isEnrolledMatch(request: DeviceSpec, device: Device): boolean {
  return device.physical && device.state !== 'deleted' && fitsDevice(request, device);
}

/** An enrolled match that is ready and not last read as not present. */
export function isPickableMatch(request: DeviceSpec, device: Device): boolean {
  return (
    isEnrolledMatch(request, device) &&
    device.state === 'ready' &&
    device.presence?.present !== false
  );
}

export type PhysicalMatchKind = 'enrolled' | 'pickable';

/** Whether a worker's view lists a physical device the request matches. Reads devices only. */
export function physicalMatch(
  view: Pick<WorkerStatus, 'devices'>,
  request: DeviceSpec,
  which: PhysicalMatchKind,
): boolean {
  const test = which === 'enrolled' ? isEnrolledMatch : isPickableMatch;
  return view.devices.some((device) => test(request, device));
}

/** The message and details of UNKNOWN_MODEL for a physical request that nothing enrolled can match. */
export function noPhysicalMatch(request: DeviceSpec): {
  message: string;
  details: Record<string, string>;
} {
  const words: string[] = [request.platform];
  const details: Record<string, string> = { platform: request.platform };
  if (request.model !== undefined) {
    words.push(request.model);
    details.model = request.model;
  }
  if (request.class !== undefined) {
    words.push(`class ${request.class}`);
    details.class = request.class;
  }
  if (request.os !== undefined) {
    words.push(`os ${request.os}`);
    details.osVersion = request.os;
  }
  let message = `no enrolled physical device can match ${words.join(' ')}`;
  const constraint = request.os === undefined ? undefined : parseOsSpec(request.os);
  if (constraint?.kind === 'exact') {
    const major = constraint.version[0] ?? 0;
    message += ` (os ${request.os} is an exact version; for any ${major}.x use --os ">=${major} <${major + 1}")`;
  }
  return { message, details };
}

// --- Catalog checks for virtual requests, in the order the fleet table and can-serve use them ---

export function hasPlatform(catalog: Catalog, request: Pick<DeviceSpec, 'platform'>): boolean {
  return catalog.platforms.includes(request.platform);
}

/** The catalog offers the model (any case) and class the request names, on its platform. */
export function listsModel(catalog: Catalog, request: DeviceSpec): boolean {
  const wantedClass = requestedClass(request);
  return catalog.models.some(
    (model) =>
      model.platform === request.platform &&
      (request.model === undefined || sameModel(request.model, model.name)) &&
      (wantedClass === undefined || model.class === wantedClass),
  );
}

/** The catalog has a runtime that fits the request's OS (any runtime of the platform if none named). */
export function hasRuntime(catalog: Catalog, request: DeviceSpec): boolean {
  return catalog.runtimes.some(
    (runtime) =>
      runtime.platform === request.platform &&
      (request.os === undefined || osMatches(request.os, runtime.version)),
  );
}

/** A short description of a request for people: "ios iPhone 16", "android physical os 34". */
export function describeRequest(request: DeviceSpec): string {
  const words: string[] = [request.platform];
  if (request.physical) words.push('physical');
  if (request.model !== undefined) words.push(request.model);
  if (request.class !== undefined) words.push(request.class);
  if (request.os !== undefined) words.push(`os ${request.os}`);
  return words.join(' ');
}

export function platformName(platform: DeviceSpec['platform']): string {
  return PLATFORM_NAMES[platform];
}

/** The key physical claims are held by in one walk: the worker and the match (DESIGN.md §4.2). */
export function physicalClaimKey(worker: string, request: DeviceSpec): string {
  return JSON.stringify([
    worker,
    request.platform,
    request.model?.toLowerCase() ?? null,
    requestedClass(request) ?? null,
    request.os ?? null,
  ]);
}
