import { describe, expect, it } from 'vitest';
import { ApiContact } from './api-contact.js';

const PERIOD = 10_000;

/** A contact whose renewals were answered up to `at`. */
function heardUntil(at: number): ApiContact {
  const contact = new ApiContact();
  contact.sent(at - 5);
  contact.answered(at);
  return contact;
}

describe('a heartbeat lapse, judged by what this process could hear of the API server', () => {
  it('is judged when it falls due, with no renewal of ours in doubt', () => {
    const contact = heardUntil(1_000);
    expect(contact.lapseOf(5_000, PERIOD, 6_000)).toBe(5_000);
    expect(contact.lapseOf(8_000, PERIOD, 6_000)).toBe(8_000);
  });

  it('is judged as ever by a process that has no renewals (no leader election)', () => {
    expect(new ApiContact().lapseOf(5_000, PERIOD, 6_000)).toBe(5_000);
  });

  it('is held while a renewal is unanswered, and judged again when it is answered', () => {
    const contact = heardUntil(1_000);
    let told = 0;
    contact.onAnswerAfterHold(() => told++);
    contact.sent(5_500);
    expect(contact.lapseOf(5_000, PERIOD, 6_000)).toBe(Infinity);
    // Answered in a moment: no silence; the lapse is judged at once.
    contact.answered(5_600);
    expect(told).toBe(1);
    expect(contact.lapseOf(5_000, PERIOD, 6_000)).toBe(5_000);
  });

  it('after a silence (renewals failed) lapses no sooner than a heartbeat period after its end', () => {
    const contact = heardUntil(1_000);
    let told = 0;
    contact.onAnswerAfterHold(() => told++);
    contact.sent(6_000);
    contact.failed();
    expect(contact.lapseOf(8_000, PERIOD, 9_000)).toBe(Infinity);
    contact.sent(11_000);
    contact.failed();
    contact.sent(16_000);
    contact.answered(16_100);
    expect(told).toBe(1);
    // Fresh when the silence began (lapsing after 1 s): its agent has until 26.1 s to renew.
    expect(contact.lapseOf(8_000, PERIOD, 17_000)).toBe(26_100);
    // Lapsed before it: judged as ever.
    expect(contact.lapseOf(900, PERIOD, 17_000)).toBe(900);
    // Renewed since: its own lapse, if later.
    expect(contact.lapseOf(27_000, PERIOD, 17_000)).toBe(27_000);
  });

  it('takes a renewal answered more than a second after it was sent for a silence', () => {
    const contact = heardUntil(1_000);
    contact.sent(6_000);
    contact.answered(15_000);
    expect(contact.lapseOf(8_000, PERIOD, 16_000)).toBe(25_000);
  });
});
