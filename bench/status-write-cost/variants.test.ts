import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readCrd, type Crd } from '../harness/index.js';
import { countRules, crdVariant } from './variants.js';

const crdPath = fileURLToPath(
  new URL('../../crds/simlock.dev_leaserequests.yaml', import.meta.url),
);
const rulesOf = (crd: Crd) =>
  crd.spec.versions.reduce((sum, v) => sum + countRules(v.schema.openAPIV3Schema), 0);

describe('crdVariant', () => {
  it('keeps crds/ as it is for generated, and leaves the original untouched', async () => {
    const crd = await readCrd(join(crdPath));
    const all = rulesOf(crd);
    expect(all).toBeGreaterThan(1);
    expect(crdVariant(crd, 'generated')).toEqual({ crd, removedRules: 0 });
    crdVariant(crd, 'no-cel');
    expect(rulesOf(crd)).toBe(all);
  });

  it('takes out the status item rules alone, or every rule', async () => {
    const crd = await readCrd(crdPath);
    const all = rulesOf(crd);
    const noStatus = crdVariant(crd, 'no-status-cel');
    // The capacity reason's, and exactly one of worker and names (ADR 0033).
    expect(noStatus.removedRules).toBe(2);
    expect(rulesOf(noStatus.crd)).toBe(all - 2);
    expect(JSON.stringify(noStatus.crd)).not.toContain("self.reason == 'full'");
    expect(JSON.stringify(noStatus.crd)).toContain('self >= oldSelf');
    const none = crdVariant(crd, 'no-cel');
    expect(none.removedRules).toBe(all);
    expect(JSON.stringify(none.crd)).not.toContain('x-kubernetes-validations');
  });

  it('makes status.workers a list-map keyed by worker again, every rule kept', async () => {
    const crd = await readCrd(crdPath);
    const listMap = crdVariant(crd, 'map-workers');
    expect(listMap.removedRules).toBe(0);
    expect(rulesOf(listMap.crd)).toBe(rulesOf(crd));
    const workers = (c: Crd) =>
      JSON.stringify(c.spec.versions[0]?.schema.openAPIV3Schema).match(
        /"workers":\{[^{]*"x-kubernetes-list-type":"(\w+)"/,
      )?.[1];
    expect(workers(listMap.crd)).toBe('map');
    expect(workers(crd)).toBe('atomic');
    // The conditions stay a list-map.
    expect(JSON.stringify(listMap.crd)).toContain('"x-kubernetes-list-map-keys":["type"]');
  });

  it('adds status.workerGroups beside status.workers, the item rule on each group', async () => {
    const crd = await readCrd(crdPath);
    const grouped = crdVariant(crd, 'grouped-workers');
    expect(grouped.removedRules).toBe(0);
    const status = (c: Crd) =>
      (c.spec.versions[0]?.schema.openAPIV3Schema as { properties: { status: Status } }).properties
        .status.properties;
    const workers = status(crd).workers as Schema & { items: Schema & { properties: Schema } };
    expect(status(crd)).not.toHaveProperty('workerGroups');
    const groups = status(grouped.crd).workerGroups as Schema & {
      items: Schema & { properties: Record<string, Schema> };
    };
    expect(status(grouped.crd).workers).toEqual(workers);
    expect(groups['x-kubernetes-list-type']).toBe('atomic');
    expect(groups.items.required).toEqual(['reason', 'workers']);
    expect(groups.items.properties.reason).toEqual(workers.items.properties.reason);
    expect(groups.items.properties.capacityReason).toEqual(workers.items.properties.capacityReason);
    expect(groups.items['x-kubernetes-validations']).toEqual([
      {
        rule: "!has(self.capacityReason) || self.reason == 'full'",
        message: 'capacityReason is allowed only with reason full',
      },
    ]);
    expect(groups.items.properties.workers).toEqual({
      type: 'array',
      'x-kubernetes-list-type': 'atomic',
      maxItems: workers.maxItems,
      items: workers.items.properties.worker,
    });
    // Every rule of crds/ kept, and one more: the group's.
    expect(rulesOf(grouped.crd)).toBe(rulesOf(crd) + 1);
  });
});

type Schema = Record<string, unknown>;
type Status = { properties: Record<string, Schema> };
