// An agent's refusal is a claim read off the wire: check it against the contract before use.
import { CapacityReason } from './reasons.js';
import { isCannotServeCode, type CannotServeCode } from './errors.js';
import { Refusal } from './schemas.js';

export type CheckedRefusal =
  | { kind: 'no-capacity'; capacityReason?: CapacityReason; message: string }
  | { kind: 'cannot-serve'; code: CannotServeCode; message: string }
  // Any other code: the worker would not take it, for reasons we do not know; treat as full.
  | { kind: 'other'; code: string; message: string };

/** Parse a Lease's `status.refusal`; a capacity reason outside the four reads as plain full. */
export function parseRefusal(raw: unknown): CheckedRefusal {
  const parsed = Refusal.safeParse(raw);
  if (!parsed.success) return { kind: 'other', code: 'INVALID', message: 'unreadable refusal' };
  const { code, message, capacityReason } = parsed.data;
  if (code === 'NO_CAPACITY') {
    const reason = CapacityReason.safeParse(capacityReason);
    return reason.success
      ? { kind: 'no-capacity', capacityReason: reason.data, message }
      : { kind: 'no-capacity', message };
  }
  if (isCannotServeCode(code)) return { kind: 'cannot-serve', code, message };
  return { kind: 'other', code, message };
}
