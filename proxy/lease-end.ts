// A lease that ends while its tool runs: the agent stops the tool and ends the stream with an error
// event LEASE_LOST, knowing only that the lease ended. The proxy says why, from the request's
// `Granted` condition once it reads Released (force release, expiry, idleness, holder gone), or
// from the request being gone or going (deleted); the controller writes that status at about the
// time it deletes the Lease, so it is looked for a few seconds. The agent's events are split into
// frames as they pass, so that this one can be held back and rewritten.
import {
  LeaseRequestObject,
  REQUEST_DELETED_TEXT,
  leaseEndText,
  leaseLostMessage,
  sseFrame,
} from '../api/index.js';
import {
  isNotFound,
  simlockPath,
  sleep,
  systemClock,
  type Clock,
  type KubeClient,
} from '../runtime/index.js';

/** Splits a stream of Server-Sent Events into whole frames (each without its blank line). */
export class SseFrames {
  private readonly decoder = new TextDecoder();
  private buffered = '';

  /** The frames completed by this chunk. */
  push(chunk: Uint8Array): string[] {
    this.buffered += this.decoder.decode(chunk, { stream: true });
    const frames = this.buffered.split('\n\n');
    this.buffered = frames.pop() ?? '';
    return frames;
  }

  /** What is left once the stream ended (a frame cut short), if anything. */
  rest(): string {
    const rest = this.buffered + this.decoder.decode();
    this.buffered = '';
    return rest;
  }
}

/** Whether a frame is the agent's LEASE_LOST error. */
export function isLeaseLostFrame(frame: string): boolean {
  if (!frame.startsWith('event: error\n')) return false;
  const data = frame.slice(frame.indexOf('\n') + 1);
  if (!data.startsWith('data:')) return false;
  try {
    return (JSON.parse(data.slice(5)) as { code?: unknown }).code === 'LEASE_LOST';
  } catch {
    return false;
  }
}

export interface LeaseEndOptions {
  clock?: Clock;
  /** How long the request is looked at for a reason (it is released as the Lease goes). */
  waitMs?: number;
  intervalMs?: number;
}

/** Why the lease ended, from its request; undefined when the request still reads Granted. */
export async function leaseEndWhy(
  client: KubeClient,
  namespace: string,
  name: string,
  options: LeaseEndOptions = {},
): Promise<string | undefined> {
  const clock = options.clock ?? systemClock();
  const deadline = clock.now() + (options.waitMs ?? 5000);
  for (;;) {
    let object: unknown;
    try {
      object = await client.get(simlockPath('leaseRequest', { namespace, name }));
    } catch (error) {
      if (isNotFound(error)) return REQUEST_DELETED_TEXT;
      object = undefined;
    }
    const request = LeaseRequestObject.safeParse(object);
    if (request.success) {
      if (request.data.metadata.deletionTimestamp !== undefined) return REQUEST_DELETED_TEXT;
      const status = request.data.status;
      if (status?.phase !== undefined && status.phase !== 'Granted') {
        const granted = status.conditions?.find((condition) => condition.type === 'Granted');
        if (!granted) return leaseEndText(status.phase);
        return `${leaseEndText(granted.reason)}${granted.message ? ` (${granted.message})` : ''}`;
      }
    }
    if (clock.now() >= deadline) return undefined;
    await sleep(clock, options.intervalMs ?? 200);
  }
}

/** The agent's LEASE_LOST frame, said with the reason when one is found. */
export async function leaseLostFrame(
  client: KubeClient,
  namespace: string,
  name: string,
  agentFrame: string,
  options: LeaseEndOptions = {},
): Promise<string> {
  const why = await leaseEndWhy(client, namespace, name, options).catch(() => undefined);
  if (why === undefined) return `${agentFrame}\n\n`;
  return sseFrame('error', { code: 'LEASE_LOST', message: leaseLostMessage(name, why) });
}
