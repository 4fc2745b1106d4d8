// Writes crds/*.yaml from the zod schemas in api/, and the same files into the Helm chart's crds/
// (Helm installs CRDs only from the chart's own folder). Never edit either by hand: run
// `npm run generate`. generate-crds.test.ts and chart.test.ts fail on any difference.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { z } from 'zod';
import {
  GROUP,
  LEASE_WORKER_FIELD,
  LeaseRequestSpec,
  LeaseRequestStatus,
  LeaseSpec,
  LeaseStatus,
  RESOURCES,
  VERSION,
  WorkerSpec,
  WorkerStatus,
} from '../api/index.js';
import { crdSchema } from './crd-schema.js';

interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'boolean' | 'date' | 'number';
  jsonPath: string;
  description?: string;
  priority?: number;
}

interface Resource {
  names: (typeof RESOURCES)[keyof typeof RESOURCES];
  scope: 'Namespaced' | 'Cluster';
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  specRequired: boolean;
  columns: PrinterColumn[];
  /** Fields a list or watch may select by (`fieldSelector`), Kubernetes 1.32+. */
  selectableFields?: { jsonPath: string }[];
}

const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const resources: Resource[] = [
  {
    names: RESOURCES.worker,
    scope: 'Cluster',
    description:
      'A device host running the simlock agent; status is its view, written by its agent.',
    spec: WorkerSpec,
    status: WorkerStatus,
    specRequired: false,
    columns: [
      { name: 'Label', type: 'string', jsonPath: '.spec.label' },
      { name: 'Drained', type: 'boolean', jsonPath: '.spec.drained' },
      { name: 'Health', type: 'string', jsonPath: '.status.health' },
      { name: 'Running', type: 'string', jsonPath: '.status.slots', description: 'running/limit' },
      { name: 'Devices', type: 'integer', jsonPath: '.status.deviceCount' },
      { name: 'Endpoint', type: 'string', jsonPath: '.status.endpoint', priority: 1 },
      { name: 'Agent', type: 'string', jsonPath: '.status.agentVersion', priority: 1 },
      age,
    ],
  },
  {
    names: RESOURCES.leaseRequest,
    scope: 'Namespaced',
    description:
      'A request for a device. It waits, is dispatched to a worker, and is granted or fails.',
    spec: LeaseRequestSpec,
    status: LeaseRequestStatus,
    specRequired: true,
    columns: [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Platform', type: 'string', jsonPath: '.spec.platform' },
      { name: 'Model', type: 'string', jsonPath: '.spec.model' },
      {
        name: 'Device',
        type: 'string',
        jsonPath: '.status.device.model',
        description: 'The granted device model (also when the request named none)',
      },
      { name: 'Worker', type: 'string', jsonPath: '.status.worker' },
      { name: 'Reasons', type: 'string', jsonPath: '.status.summary' },
      { name: 'Error', type: 'string', jsonPath: '.status.error.code', priority: 1 },
      { name: 'Position', type: 'integer', jsonPath: '.status.position', priority: 1 },
      { name: 'Holder', type: 'string', jsonPath: '.spec.holder', priority: 1 },
      { name: 'Expires', type: 'string', jsonPath: '.status.expiresAt', priority: 1 },
      age,
    ],
  },
  {
    names: RESOURCES.lease,
    scope: 'Namespaced',
    description:
      "One dispatch of a LeaseRequest to a worker, answered by its agent. In the worker's namespace, named by the request's UID; spec.request names the request.",
    spec: LeaseSpec,
    status: LeaseStatus,
    specRequired: true,
    // For operators (`--field-selector spec.worker=<name>`); agents watch their namespace (ADR 0034).
    selectableFields: [{ jsonPath: `.${LEASE_WORKER_FIELD}` }],
    columns: [
      { name: 'Request', type: 'string', jsonPath: '.spec.request.name' },
      { name: 'Worker', type: 'string', jsonPath: '.spec.worker' },
      { name: 'Device', type: 'string', jsonPath: '.status.device.name' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Expires', type: 'string', jsonPath: '.spec.expiresAt' },
      {
        name: 'Idle',
        type: 'date',
        jsonPath: '.status.activity.lastExecAt',
        description: 'Time since the last exec through the proxy',
      },
      { name: 'Device-ID', type: 'string', jsonPath: '.status.device.id', priority: 1 },
      age,
    ],
  },
];

export function customResourceDefinition(resource: Resource): Record<string, unknown> {
  const { names } = resource;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: resource.scope,
      names: {
        kind: names.kind,
        listKind: `${names.kind}List`,
        plural: names.plural,
        singular: names.singular,
        shortNames: [...names.shortNames],
        categories: ['simlock'],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: resource.columns,
          ...(resource.selectableFields ? { selectableFields: resource.selectableFields } : {}),
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: resource.description,
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: crdSchema(resource.spec),
                status: crdSchema(resource.status),
              },
              ...(resource.specRequired ? { required: ['spec'] } : {}),
            },
          },
        },
      ],
    },
  };
}

export function renderCrds(): Map<string, string> {
  const files = new Map<string, string>();
  for (const resource of resources) {
    const header = '# Generated by `npm run generate` from api/schemas.ts. Do not edit.\n';
    const body = stringify(customResourceDefinition(resource), { lineWidth: 0 });
    files.set(`${GROUP}_${resource.names.plural}.yaml`, header + body);
  }
  return files;
}

export const crdsFolder = fileURLToPath(new URL('../crds/', import.meta.url));
/** The chart's copy of crds/, byte for byte. */
export const chartCrdsFolder = fileURLToPath(new URL('../charts/simlock/crds/', import.meta.url));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rendered = renderCrds();
  for (const folder of [crdsFolder, chartCrdsFolder]) {
    mkdirSync(folder, { recursive: true });
    // A CRD removed from api/ must leave the chart too.
    for (const file of readdirSync(folder))
      if (file.endsWith('.yaml') && !rendered.has(file)) rmSync(folder + file);
    for (const [file, text] of rendered) writeFileSync(folder + file, text);
  }
  console.log(`wrote ${[...rendered.keys()].join(', ')} to crds/ and charts/simlock/crds/`);
}
