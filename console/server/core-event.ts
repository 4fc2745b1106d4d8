// A core Event as the console reads it: parsed (bounded), and what a page shows of it. One that
// does not parse, or names no object, is left out.
import { z } from 'zod';
import type { EventView } from '../model/wire.js';

const CoreEvent = z.object({
  involvedObject: z.object({
    kind: z.string().max(64).optional(),
    name: z.string().max(253).optional(),
    namespace: z.string().max(253).optional(),
  }),
  metadata: z.object({ name: z.string().max(253), creationTimestamp: z.string().optional() }),
  type: z.string().max(32).default('Normal'),
  reason: z.string().max(128).default(''),
  message: z.string().max(1024).default(''),
  count: z.number().int().min(0).max(1_000_000).optional(),
  firstTimestamp: z.string().max(64).nullish(),
  lastTimestamp: z.string().max(64).nullish(),
  eventTime: z.string().max(64).nullish(),
});

/** The Event's object and name, and its view; undefined when it does not parse. */
export function parseCoreEvent(object: unknown):
  | {
      involvedObject: { name: string; namespace: string };
      metadata: { name: string };
      view: EventView;
    }
  | undefined {
  const parsed = CoreEvent.safeParse(object);
  if (!parsed.success) return undefined;
  const { involvedObject, metadata } = parsed.data;
  const { name, namespace } = involvedObject;
  if (name === undefined || namespace === undefined) return undefined;
  const first = parsed.data.firstTimestamp ?? parsed.data.eventTime ?? metadata.creationTimestamp;
  const last = parsed.data.lastTimestamp ?? first;
  return {
    involvedObject: { name, namespace },
    metadata,
    view: {
      type: parsed.data.type,
      reason: parsed.data.reason,
      message: parsed.data.message,
      count: parsed.data.count ?? 1,
      ...(first ? { firstAt: first } : {}),
      ...(last ? { lastAt: last } : {}),
    },
  };
}
