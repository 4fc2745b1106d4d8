// The Helm chart's files that can be checked without Helm: its CRDs are crds/ byte for byte, every
// value in values.yaml is documented, and the chart runs the version of simlock it was written with.
// Helm itself (lint, template, install) is exercised in e2e/chart.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isMap, isScalar, parse, parseDocument, type YAMLMap } from 'yaml';
import { chartCrdsFolder, crdsFolder, renderCrds } from './generate-crds.js';

const chartFolder = fileURLToPath(new URL('../charts/simlock/', import.meta.url));

describe('charts/simlock/crds/', () => {
  it('holds exactly the files of crds/, byte for byte (run npm run generate)', () => {
    const files = readdirSync(crdsFolder).sort();
    expect(readdirSync(chartCrdsFolder).sort()).toEqual(files);
    for (const file of files) {
      expect(
        readFileSync(chartCrdsFolder + file).equals(readFileSync(crdsFolder + file)),
        `charts/simlock/crds/${file} differs from crds/${file}`,
      ).toBe(true);
    }
  });

  it('is what npm run generate writes', () => {
    for (const [file, text] of renderCrds()) {
      expect(readFileSync(chartCrdsFolder + file, 'utf8'), `${file} is stale`).toBe(text);
    }
  });
});

// Maps whose keys are Kubernetes fields, documented by Kubernetes rather than by us.
const kubernetesShaped = new Set([
  'controller.resources',
  'proxy.resources',
  'console.resources',
  'podSecurityContext',
  'containerSecurityContext',
]);

/**
 * Dotted paths of the values in values.yaml without a comment right above them. The yaml library
 * keeps the comment above a nested map's first key on the map itself: `firstComment` is that.
 */
function undocumented(map: YAMLMap, prefix: string): string[] {
  const missing: string[] = [];
  map.items.forEach((pair, index) => {
    const key = isScalar(pair.key) ? String(pair.key.value) : '?';
    const path = prefix ? `${prefix}.${key}` : key;
    const comment =
      (isScalar(pair.key) ? pair.key.commentBefore : undefined) ??
      (index === 0 ? map.commentBefore : undefined);
    if (!comment?.trim()) missing.push(path);
    if (isMap(pair.value) && !kubernetesShaped.has(path))
      missing.push(...undocumented(pair.value, path));
  });
  return missing;
}

describe('charts/simlock/values.yaml', () => {
  it('has a comment above every value', () => {
    const root = parseDocument(readFileSync(`${chartFolder}values.yaml`, 'utf8')).contents;
    expect(isMap(root)).toBe(true);
    if (isMap(root)) expect(undocumented(root, '')).toEqual([]);
  });
});

describe('charts/simlock/Chart.yaml', () => {
  it('runs the version of simlock in package.json', () => {
    const chart = parse(readFileSync(`${chartFolder}Chart.yaml`, 'utf8')) as { appVersion: string };
    const pkg = JSON.parse(
      readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8'),
    ) as { version: string };
    expect(chart.appVersion).toBe(pkg.version);
  });
});
