// JSON merge patches (RFC 7386), the one way simlock writes a status: a merge patch replaces lists
// whole, and a field that went away must be sent as null to be cleared.

/** A merge patch that turns `previous` into `next` at the top level. */
export function mergePatch(
  previous: Readonly<Record<string, unknown>> | undefined,
  next: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...next };
  for (const key of Object.keys(previous ?? {})) if (!(key in next)) patch[key] = null;
  return patch;
}
