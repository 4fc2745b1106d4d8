// -o json|yaml|name, the kubectl way: a list prints as `{apiVersion: v1, kind: List, items}`, JSON
// indented by four spaces, names as `<singular>.<group>/<name>`.
import { stringify } from 'yaml';
import { API_VERSION, GROUP, RESOURCES } from '../../api/index.js';
import type { OutputFormat } from '../flags.js';

export interface KubeList<T> {
  apiVersion: 'v1';
  kind: 'List';
  metadata: { resourceVersion: string };
  items: T[];
}

export function asList<T>(items: readonly T[]): KubeList<T> {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [...items] };
}

/** List items from the API server lack apiVersion and kind; kubectl fills them in, so do we. */
export function withKind<T extends object>(
  resource: keyof typeof RESOURCES,
  object: T,
): T & { apiVersion: string; kind: string } {
  return { apiVersion: API_VERSION, kind: RESOURCES[resource].kind, ...object };
}

export function toJson(value: unknown): string {
  return JSON.stringify(value, null, 4);
}

export function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0 }).trimEnd();
}

/** Serialises for -o json or -o yaml; undefined for the other formats. */
export function serialise(value: unknown, format: OutputFormat | undefined): string | undefined {
  if (format === 'json') return toJson(value);
  if (format === 'yaml') return toYaml(value);
  return undefined;
}

export function resourceName(resource: keyof typeof RESOURCES, name: string): string {
  return `${RESOURCES[resource].singular}.${GROUP}/${name}`;
}
