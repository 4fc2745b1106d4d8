// A CRD as the benchmarks that vary one read it from crds/ (the parts they change typed, the rest
// kept as it stands) and put it in force on a running API server.
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { z } from 'zod';
import type { KubeClient } from '../../runtime/index.js';

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
const Json: z.ZodType<Json> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(Json),
    z.record(z.string(), Json),
  ]),
);

/** The parts of a CRD the variants touch; the rest is kept as it stands. */
export const Crd = z.looseObject({
  apiVersion: z.literal('apiextensions.k8s.io/v1'),
  kind: z.literal('CustomResourceDefinition'),
  metadata: z.looseObject({ name: z.string() }),
  spec: z.looseObject({
    versions: z.array(z.looseObject({ schema: z.looseObject({ openAPIV3Schema: Json }) })),
  }),
});
export type Crd = z.infer<typeof Crd>;

const StoredCrd = z.object({ metadata: z.object({ resourceVersion: z.string() }) });

/** The CRD's path on the API server. */
export function crdPath(crd: Crd): string {
  return `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
}

/** Replaces the CRD on the API server by `crd`, onto the version stored now. */
export async function replaceCrd(admin: KubeClient, crd: Crd): Promise<void> {
  const path = crdPath(crd);
  const stored = StoredCrd.parse(await admin.get(path));
  await admin.replace(path, {
    ...crd,
    metadata: { ...crd.metadata, resourceVersion: stored.metadata.resourceVersion },
  });
}

export async function readCrd(path: string): Promise<Crd> {
  return Crd.parse(parse(await readFile(path, 'utf8')));
}
