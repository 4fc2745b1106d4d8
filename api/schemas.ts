// The shapes of Worker, LeaseRequest and Lease, defined once, one file per resource. The CRDs in
// crds/ are generated from these (tools/generate-crds.ts), so every bound here is also enforced by
// the API server; the `x-kubernetes-*` metadata goes straight into the CRD's OpenAPI schema.
export * from './schema-parts.js';
export * from './worker-schema.js';
export * from './lease-request-schema.js';
export * from './lease-schema.js';
export * from './grant-progress.js';
export * from './device-recovery.js';
export * from './grant-estimate.js';
