import { describe, expect, it } from 'vitest';
import { leaseNamespaceOf } from './lease-namespace.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

describe('leaseNamespaceOf', () => {
  it('is simlock-w-<worker> for a worker whose name makes a DNS label', () => {
    expect(leaseNamespaceOf('worker-a')).toBe('simlock-w-worker-a');
    expect(leaseNamespaceOf('a'.repeat(53))).toBe(`simlock-w-${'a'.repeat(53)}`);
  });

  it('shortens a long or dotted name and adds its hash, always a DNS label', () => {
    const names = [
      'mac-01.lab.example.com',
      'a'.repeat(54),
      `${'b'.repeat(43)}.-x`,
      'x'.repeat(253),
    ];
    for (const worker of names) {
      const namespace = leaseNamespaceOf(worker);
      expect(namespace.length).toBeLessThanOrEqual(63);
      expect(namespace).toMatch(DNS_LABEL);
      expect(namespace).toMatch(/^simlock-w-.*-[0-9a-f]{8}$/);
    }
    expect(leaseNamespaceOf('mac-01.lab.example.com')).toMatch(
      /^simlock-w-mac-01-lab-example-com-/,
    );
  });

  it('gives workers that differ only past the cut different namespaces', () => {
    const stem = 'h'.repeat(60);
    expect(leaseNamespaceOf(`${stem}-1`)).not.toBe(leaseNamespaceOf(`${stem}-2`));
    expect(leaseNamespaceOf('a.b')).not.toBe(leaseNamespaceOf('a-b'));
  });

  it('is the same for the same worker every time', () => {
    expect(leaseNamespaceOf('mac-01.lab')).toBe(leaseNamespaceOf('mac-01.lab'));
  });
});
