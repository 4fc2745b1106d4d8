// The fleet table (DESIGN.md §4.1, §3.3): on admission, fail a request at once when no known
// worker could ever serve it, or when every one that could is out of reach; otherwise route it
// (and let it wait). Known workers are those not incompatible. The table asks the stages
// themselves, so a rule it shares with routing is decided in one place.
import type { ErrorCode } from '../errors.js';
import type { DeviceSpec } from '../lease-request-schema.js';
import { describeRequest, noPhysicalMatch, platformName, requestedClass } from '../match.js';
import type { WaitingReason } from '../reasons.js';
import { CAN_SERVE_REASONS, canServe } from './stages/can-serve.js';
import { hasCapabilities } from './stages/has-capabilities.js';
import { takesRequests } from './stages/takes-requests.js';
import type { Assessment, WorkerView } from './types.js';

/** Capabilities named in a CAPABILITY_MISSING message at most, so it stays within its bound. */
const MAX_NAMED_CAPABILITIES = 5;

function fail(code: ErrorCode, message: string, details?: Record<string, string>): Assessment {
  return details === undefined
    ? { kind: 'fail', code, message }
    : { kind: 'fail', code, message, details };
}

/** The model and class a request asks for, in words: "ios iPhone 16", "ios tablet". */
function modelWords(request: DeviceSpec): { text: string; details: Record<string, string> } {
  const words: string[] = [request.platform];
  const details: Record<string, string> = { platform: request.platform };
  if (request.model !== undefined) {
    words.push(request.model);
    details.model = request.model;
  }
  const wantedClass = requestedClass(request);
  if (wantedClass !== undefined) {
    words.push(wantedClass);
    details.class = wantedClass;
  }
  return { text: words.join(' '), details };
}

/** The error for the furthest can-serve check that no known worker passes. */
function cannotServe(request: DeviceSpec, reason: WaitingReason): Assessment {
  if (reason === 'no-driver') {
    return fail('NO_DRIVER', `no worker serves ${platformName(request.platform)}`, {
      platform: request.platform,
    });
  }
  if (request.physical === true) {
    // The same message and details the agent gives the same request: one function builds both.
    const { message, details } = noPhysicalMatch(request);
    return fail('UNKNOWN_MODEL', message, details);
  }
  const model = modelWords(request);
  if (reason === 'unknown-model') {
    return fail('UNKNOWN_MODEL', `no worker offers ${model.text}`, model.details);
  }
  const runtime =
    request.os === undefined
      ? `any ${platformName(request.platform)} runtime`
      : `${platformName(request.platform)} ${request.os}`;
  return fail('RUNTIME_MISSING', `no worker that offers ${model.text} has ${runtime} installed`, {
    platform: request.platform,
    ...(request.os === undefined ? {} : { osVersion: request.os }),
  });
}

function capabilityMissing(request: DeviceSpec, serving: readonly WorkerView[]): Assessment {
  const required = request.requires ?? [];
  // Which required capabilities no serving worker offers, asked of has-capabilities one by one.
  const nowhere = required.filter(
    (name) =>
      !serving.some(
        (worker) => hasCapabilities.check(worker, { ...request, requires: [name] }) === undefined,
      ),
  );
  // Name those, or every requirement when each is offered somewhere but never all on one worker.
  const shown = nowhere.length > 0 ? nowhere : required;
  const named = shown.slice(0, MAX_NAMED_CAPABILITIES);
  const list =
    named.join(', ') +
    (shown.length > named.length ? ` and ${shown.length - named.length} more` : '');
  const what = describeRequest(request);
  return fail(
    'CAPABILITY_MISSING',
    nowhere.length > 0
      ? `no worker that can serve ${what} offers ${list}`
      : `no worker that can serve ${what} offers all of ${list} together`,
  );
}

function noWorker(message: string): Assessment {
  return fail('NO_CAPACITY', message, { reason: 'no-worker' });
}

export function assess(request: DeviceSpec, views: readonly WorkerView[]): Assessment {
  const known = views.filter((worker) => worker.connection !== 'incompatible');
  const takes = (worker: WorkerView): boolean => takesRequests.check(worker, request) === undefined;

  if (!known.some(takes)) {
    return noWorker(
      'no worker takes requests now: every known worker is drained, disconnected or not ready',
    );
  }

  // can-serve checks platform, then model (or, physical, an enrolled device), then runtime; the
  // row that fails is the furthest check some known worker gets to, since passing a later check
  // means passing every earlier one.
  const order: readonly WaitingReason[] = CAN_SERVE_REASONS;
  const serving: WorkerView[] = [];
  let furthest = 0;
  for (const worker of known) {
    const gap = canServe.check(worker, request);
    if (gap === undefined) serving.push(worker);
    else furthest = Math.max(furthest, order.indexOf(gap.reason));
  }
  if (serving.length === 0) return cannotServe(request, order[furthest] ?? 'no-driver');

  const capable = serving.filter((worker) => hasCapabilities.check(worker, request) === undefined);
  if (capable.length === 0) return capabilityMissing(request, serving);

  if (!capable.some(takes)) {
    return noWorker(
      `every worker that can serve ${describeRequest(request)} is drained, disconnected or not ready`,
    );
  }
  return { kind: 'route' };
}
