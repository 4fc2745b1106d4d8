// Turns a zod schema into the OpenAPI v3 schema a CustomResourceDefinition accepts (a structural
// schema): zod's OpenAPI 3.0 output, minus what the API server refuses, plus our x-kubernetes-*
// metadata, which zod passes through from `.meta()`.
import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

// zod writes the safe-integer range on every integer; it is no bound of ours, and int64 is wider.
const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

function isObject(value: unknown): value is JsonSchema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Recursively rewrites one node of zod's output into a structural-schema node. */
function toStructural(node: JsonSchema): JsonSchema {
  const anyOf = node.anyOf;
  if (Array.isArray(anyOf)) {
    const types = anyOf.map((branch) => (isObject(branch) ? branch.type : undefined)).sort();
    if (anyOf.length === 2 && types[0] === 'integer' && types[1] === 'string') {
      // The one union a structural schema allows: int-or-string.
      const { anyOf: _union, ...rest } = node;
      return { ...mapChildren(rest), 'x-kubernetes-int-or-string': true };
    }
    throw new Error(
      `a CRD schema cannot hold a union (${JSON.stringify(types)}): flatten it and state the rule in CEL`,
    );
  }
  const result = mapChildren(node);
  delete result.$schema;
  if (result.additionalProperties === false) delete result.additionalProperties;
  if (result.minimum === -SAFE_INTEGER) delete result.minimum;
  if (result.maximum === SAFE_INTEGER) delete result.maximum;
  // date-time is checked by `format`; zod's long pattern only costs CEL budget.
  if (result.format === 'date-time') delete result.pattern;
  return result;
}

function mapChildren(node: JsonSchema): JsonSchema {
  const result: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && isObject(value)) {
      result[key] = Object.fromEntries(
        Object.entries(value).map(([name, child]) => [name, toStructural(child as JsonSchema)]),
      );
    } else if ((key === 'items' || key === 'additionalProperties') && isObject(value)) {
      result[key] = toStructural(value);
    } else {
      result[key] = value;
    }
  }
  return result;
}

export function crdSchema(schema: z.ZodType): JsonSchema {
  return toStructural(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }));
}
