import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../runtime/index.js';
import { fieldSelectorFor, isFieldNotSelectable, labelSelectorFor } from './lease-selector.js';

describe('the Leases an agent selects', () => {
  it('are its worker by spec.worker, or by the worker label on an older CRD', () => {
    expect(fieldSelectorFor('mac-1')).toEqual({ fieldSelector: 'spec.worker=mac-1' });
    expect(labelSelectorFor('mac-1')).toEqual({ labelSelector: 'simlock.dev/worker=mac-1' });
  });

  it('fall back to the label only when the API server does not know the field', () => {
    const refusal = (status: number, message: string) =>
      new KubeApiError(status, 'BadRequest', message, {});
    expect(isFieldNotSelectable(refusal(400, 'field label not supported: spec.worker'))).toBe(true);
    // Another field, another 400, or not an API answer at all: the field selector stays.
    expect(isFieldNotSelectable(refusal(400, 'field label not supported: spec.other'))).toBe(false);
    expect(isFieldNotSelectable(refusal(400, 'unable to parse requirement'))).toBe(false);
    expect(isFieldNotSelectable(refusal(500, 'field label not supported: spec.worker'))).toBe(
      false,
    );
    expect(isFieldNotSelectable(new Error('field label not supported: spec.worker'))).toBe(false);
  });
});
