// A dispatch the agent answered Pending, the part of the request machine (request-machine.ts)
// between the dispatch and the grant: the agent acknowledged it and prepares a device (a cold
// boot: a longer timer), and reports its progress making or booting it (api/grant-progress.ts),
// which the request's status shows while it is Dispatched. Pure.
import { sameJson, type GrantProgress } from '../api/index.js';
import type { Effect, MachineContext, RequestLife, Step } from './request-life.js';

export type Dispatch = Extract<RequestLife, { kind: 'creatingLease' | 'dispatched' }>;

/**
 * The agent acknowledged it and is preparing a device (a cold boot): give it longer, and tell the
 * dispatch now rather than with a grant that may be minutes away (ADR 0016). Before the create has
 * answered, leaseCreated tells it.
 */
export function acknowledge(
  life: Dispatch,
  context: MachineContext,
): { life: Dispatch; effects: Effect[] } {
  if (life.acknowledged) return { life, effects: [] };
  return {
    life: { ...life, acknowledged: true },
    effects: [
      { type: 'wakeAt', timer: 'dispatch', at: context.now + context.grantTimeoutMs },
      ...(life.kind === 'dispatched'
        ? [{ type: 'recordEvent', event: 'acknowledged' } as const]
        : []),
    ],
  };
}

/**
 * The agent's progress making or booting the device (its Lease's status.progress, while Pending)
 * is copied to the request's status while it is Dispatched: a progress that changed is one status
 * write, the same one again none; a new stage is an Event too, once the dispatch has been told
 * (before the create has answered, leaseCreated tells it). Leaving Dispatched takes it off
 * (status.ts shows it only then).
 */
export function progressed(
  step: { life: Dispatch; effects: Effect[] },
  progress: GrantProgress | undefined,
): Step {
  const { life } = step;
  if (sameJson(life.progress ?? null, progress ?? null)) return step;
  const effects: Effect[] = [
    ...step.effects,
    { type: 'writeStatus', change: { kind: 'progress', progress } },
  ];
  if (progress && progress.stage !== life.progress?.stage && life.kind === 'dispatched')
    effects.push({ type: 'recordProgress', progress });
  return { life: { ...life, progress }, effects };
}
