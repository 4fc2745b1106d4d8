// The flags every command takes, like kubectl's (--kubeconfig, --context, --cluster, --user,
// -n/--namespace, -A, -o, --no-headers, --request-timeout), checked with zod: a bad value is a
// USAGE error that names its flag. Pure: nothing here talks to the cluster.
import { z } from 'zod';
import { SimlockError } from '../api/index.js';
import { parseDuration } from './duration.js';

export const OUTPUT_FORMATS = ['json', 'yaml', 'wide', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function usageError(flag: string, message: string): SimlockError {
  return new SimlockError('USAGE', `${flag}: ${message}`, { flag });
}

/** A DNS label: namespaces. */
const dnsLabel = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: 'must be a DNS label such as "team-a"' });

/** A DNS subdomain: names of objects. */
export const objectName = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
    message: 'must be a lower-case name such as "my-lease" (letters, digits, "-" and ".")',
  });

/** A duration flag, read into whole seconds and bounded. */
export function durationFlag(min: number, max: number) {
  return z
    .string()
    .max(32)
    .transform((text, context) => {
      const seconds = parseDuration(text);
      if (seconds === undefined) {
        context.addIssue({
          code: 'custom',
          message: `"${text}" is not a duration such as 90s, 5m, 1h or 300`,
        });
        return z.NEVER;
      }
      return seconds;
    })
    .pipe(
      z
        .number()
        .min(min, { message: `must be at least ${min}s` })
        .max(max, { message: `must be at most ${max}s` }),
    );
}

const optionalText = z.string().min(1).max(4096).optional();

export const GlobalFlags = z.object({
  kubeconfig: optionalText,
  context: z.string().min(1).max(253).optional(),
  cluster: z.string().min(1).max(253).optional(),
  user: z.string().min(1).max(253).optional(),
  namespace: dnsLabel.optional(),
  allNamespaces: z.boolean().default(false),
  output: z
    .enum(OUTPUT_FORMATS, { message: `must be one of ${OUTPUT_FORMATS.join(', ')}` })
    .optional(),
  noHeaders: z.boolean().default(false),
  requestTimeout: durationFlag(0, 3600).default(30),
  simlockNamespace: dnsLabel.default('simlock-system'),
});
export type GlobalFlags = z.infer<typeof GlobalFlags>;

/** How each checked key is written on the command line, to name it in a USAGE error. */
const GLOBAL_FLAG_NAMES: Record<keyof GlobalFlags, string> = {
  kubeconfig: '--kubeconfig',
  context: '--context',
  cluster: '--cluster',
  user: '--user',
  namespace: '-n/--namespace',
  allNamespaces: '-A/--all-namespaces',
  output: '-o/--output',
  noHeaders: '--no-headers',
  requestTimeout: '--request-timeout',
  simlockNamespace: '--simlock-namespace',
};

/** Parses with `schema`; the first problem becomes a USAGE error naming its flag. */
export function parseFlags<S extends z.ZodType>(
  schema: S,
  argv: unknown,
  flagNames: Record<string, string>,
): z.infer<S> {
  const parsed = schema.safeParse(argv);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const key = String(issue?.path[0] ?? '');
  throw usageError(flagNames[key] ?? `--${key}`, issue?.message ?? 'invalid value');
}

export function parseGlobals(argv: unknown): GlobalFlags {
  return parseFlags(GlobalFlags, argv, GLOBAL_FLAG_NAMES);
}

export function rejectOutput(
  globals: GlobalFlags,
  allowed: readonly OutputFormat[],
  command: string,
): void {
  if (globals.output !== undefined && !allowed.includes(globals.output)) {
    throw usageError(
      '-o/--output',
      `${command} prints ${allowed.length > 0 ? allowed.join(', ') : 'no other format'}`,
    );
  }
}
