// Pieces every resource's shape uses: a rule zod and CEL both check, bounded strings, the OS
// spec, and object metadata as read from the API server.
import { z } from 'zod';

/** A rule that zod checks when we parse and the API server checks as CEL; both say `message`. */
export interface Rule {
  rule: string;
  message: string;
  fieldPath?: string;
}
export function celRules(...rules: Rule[]): Record<string, unknown> {
  return { 'x-kubernetes-validations': rules };
}

/** A rule zod checks with `holds` and the API server as CEL (`rule`); both say `message`. */
export interface CheckedRule<Value> extends Rule {
  holds: (value: Value) => boolean;
  /** Where zod reports a breach (the field `fieldPath` names, as a path). */
  path?: string[];
}

/**
 * An entry whose `capacityReason` says why a worker is full: allowed only with reason `full`,
 * checked by zod here and by CEL in the API server; `more` rules of the entry beside it (one
 * `.meta()` holds them all: a second one would replace the first's rules in the CRD).
 */
export function capacityReasonOnlyWhenFull<
  Entry extends z.ZodType<{ reason: string; capacityReason?: string | undefined }>,
>(entry: Entry, ...more: CheckedRule<z.output<Entry>>[]): Entry {
  const message = 'capacityReason is allowed only with reason full';
  const rules: CheckedRule<z.output<Entry>>[] = [
    {
      rule: "!has(self.capacityReason) || self.reason == 'full'",
      message,
      holds: (e) => e.capacityReason === undefined || e.reason === 'full',
      path: ['capacityReason'],
    },
    ...more,
  ];
  let checked = entry;
  for (const { holds, message, path } of rules)
    checked = checked.refine(holds, { message, ...(path ? { path } : {}) });
  return checked.meta(
    celRules(
      ...rules.map(({ rule, message, fieldPath }) => ({
        rule,
        message,
        ...(fieldPath !== undefined ? { fieldPath } : {}),
      })),
    ),
  );
}

/** CEL: each of `fields` is as it was; `required` ones are always there, the others maybe not. */
export function unchanged(fields: readonly string[], required: readonly string[]): string {
  return fields
    .map((key) =>
      required.includes(key)
        ? `self.${key} == oldSelf.${key}`
        : `(has(self.${key}) ? has(oldSelf.${key}) && self.${key} == oldSelf.${key} : !has(oldSelf.${key}))`,
    )
    .join(' && ');
}

export const name = z.string().min(1).max(253);
/** A span of a lease's life, in whole seconds: at most a week. */
export const leaseSeconds = z.number().int().min(1).max(604_800);
export const shortText = z.string().max(256);
export const timestamp = z.iso.datetime();
export const count = z.number().int().min(0).max(100_000);

export const DeviceClass = z.enum(['phone', 'tablet']);
export type DeviceClass = z.infer<typeof DeviceClass>;

// "18", "18.4", "34" (an Android API level), or a range of comparisons: ">=18 <19".
export const OS_SPEC_PATTERN =
  /^(?:(?:>=|<=|>|<|=)?[0-9]{1,4}(?:\.[0-9]{1,4}){0,2})(?: +(?:>=|<=|>|<|=)?[0-9]{1,4}(?:\.[0-9]{1,4}){0,2}){0,3}$/;
export const OsSpec = z
  .string()
  .max(64)
  .regex(OS_SPEC_PATTERN, {
    message: 'os must be a version such as "18.4" or a range such as ">=18 <19"',
  })
  .describe(
    'An exact OS version ("18.4"; an API level such as "34" on Android), or a range (">=18 <19").',
  );

// Metadata of objects as read from the API server, kept loose: the API server owns it.
export const ObjectMeta = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().optional(),
  creationTimestamp: z.union([z.string(), z.date()]).optional(),
  deletionTimestamp: z.union([z.string(), z.date()]).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  finalizers: z.array(z.string()).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMeta>;

/** A whole object of one of our kinds as read from the API server: its spec and its status. */
export function resourceObject<Spec extends z.ZodType, Status extends z.ZodType>(
  spec: Spec,
  status: Status,
) {
  return z.object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: ObjectMeta,
    spec,
    status: status.optional(),
  });
}
