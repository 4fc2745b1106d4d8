// The request machine's steps into and out of the queue (request-machine.ts decides when): queued
// with its wait timer; back in it after a dispatch that came to nothing (remembered, withdrawn), or
// failed past its deadline; failed. Pure, as the machine is.
import type { ErrorBody } from '../api/index.js';
import { waitingWakes } from './lease-lifetime.js';
import {
  ended,
  endingOf,
  type Effect,
  type Ending,
  type MachineContext,
  type RequestLife,
  type Step,
} from './request-life.js';

/** Into the queue: waits, with its wait timer (and its holder's), and a walk. */
export function enqueue(context: MachineContext): Step {
  const effects: Effect[] = [{ type: 'writeStatus', change: { kind: 'queued' } }];
  if (context.waitDeadline !== undefined)
    effects.push({ type: 'wakeAt', timer: 'wait', at: context.waitDeadline });
  effects.push(...waitingWakes(context), { type: 'walk' });
  return { life: { kind: 'waiting' }, effects };
}

/**
 * Back to the queue after a dispatch that came to nothing; past its deadline, it times out (and
 * keeps the `ending`: the dispatch's worker).
 */
export function requeue(context: MachineContext, withdrawing = false, ending?: Ending): Step {
  if (context.waitDeadline !== undefined && context.now >= context.waitDeadline) {
    const failed = fail(undefined, ending);
    return withdrawing
      ? { life: failed.life, effects: [...failed.effects, { type: 'withdrawLease' }] }
      : failed;
  }
  const queued = enqueue(context);
  return withdrawing
    ? {
        life: { kind: 'withdrawing' },
        effects: [
          { type: 'cancel', timers: ['dispatch'] },
          ...queued.effects,
          { type: 'withdrawLease' },
        ],
      }
    : { life: queued.life, effects: [{ type: 'cancel', timers: ['dispatch'] }, ...queued.effects] };
}

type Dispatching = Extract<RequestLife, { kind: 'creatingLease' | 'dispatched' }>;

/** The worker will not answer (silent past the timeout, or disconnected): remember, withdraw. */
export function giveUp(life: Dispatching, context: MachineContext): Step {
  const back = requeue(context, true, endingOf(life));
  const memo = { kind: 'unanswered' } as const;
  return {
    life: back.life,
    effects: [{ type: 'remember', worker: life.worker, memo }, ...back.effects],
  };
}

export function refused(refusal: unknown, life: Dispatching, context: MachineContext): Step {
  const back = requeue(context, true, endingOf(life));
  const memo = { kind: 'refusal', refusal } as const;
  return {
    life: back.life,
    effects: [{ type: 'remember', worker: life.worker, memo }, ...back.effects],
  };
}

/** Fails with the error; without one, TIMEOUT. */
export function fail(error?: ErrorBody, ending?: Ending): Step {
  return {
    life: ended('Failed', ending),
    effects: [
      { type: 'cancel', timers: 'all' },
      {
        type: 'writeStatus',
        change: error ? { kind: 'failed', error } : { kind: 'timedOut' },
      },
      { type: 'recordEvent', event: 'failed' },
      { type: 'walk' },
    ],
  };
}

/** A dispatch that could not be made: back in the queue, dispatched again after a backoff. */
export function backToQueue(): Step {
  return {
    life: { kind: 'waiting' },
    effects: [{ type: 'writeStatus', change: { kind: 'queued' } }, { type: 'retryDispatch' }],
  };
}
