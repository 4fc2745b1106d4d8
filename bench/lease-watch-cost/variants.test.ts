import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readCrd } from '../harness/index.js';
import { leaseCrdFor, leaseNamespaceOf, selectsWorkerField, watchQuery } from './variants.js';

const crdPath = fileURLToPath(new URL('../../crds/simlock.dev_leases.yaml', import.meta.url));

describe('Lease watch variants', () => {
  it('make spec.worker selectable for field selectors only, leaving the generated CRD alone', async () => {
    const generated = await readCrd(crdPath);
    expect(selectsWorkerField(generated)).toBe(true);
    expect(leaseCrdFor(generated, 'field')).toEqual(generated);
    expect(selectsWorkerField(leaseCrdFor(generated, 'label'))).toBe(false);
    expect(selectsWorkerField(leaseCrdFor(generated, 'none'))).toBe(false);
    expect(selectsWorkerField(generated)).toBe(true);
  });

  it('watch one worker by its label, by its spec.worker field, or not at all', () => {
    expect(watchQuery('label', 'mac-1')).toEqual({ labelSelector: 'simlock.dev/worker=mac-1' });
    expect(watchQuery('field', 'mac-1')).toEqual({ fieldSelector: 'spec.worker=mac-1' });
    expect(watchQuery('none', 'mac-1')).toBe(undefined);
  });

  it('watch one worker by the namespace of its own Leases, with no selector', () => {
    expect(watchQuery('namespace', 'mac-1')).toEqual({});
    expect(leaseNamespaceOf('namespace', 'mac-1', 'lease-watches')).toBe('lease-watches-mac-1');
    expect(leaseNamespaceOf('field', 'mac-1', 'lease-watches')).toBe('lease-watches');
  });
});
