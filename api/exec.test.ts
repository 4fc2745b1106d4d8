// The exec request is what a caller sends the proxy (and the proxy the agent): whatever the body
// holds, parsing never throws, and what it accepts keeps to every bound of the contract.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AgentExecRequest,
  EXEC_TOOLS,
  ExecRequest,
  MAX_EXEC_ARG_LENGTH,
  MAX_EXEC_ARGS,
} from './exec.js';

const anyValue = fc.oneof(fc.jsonValue(), fc.anything());
const nearlyValid = fc.record(
  {
    tool: fc.oneof(fc.constantFrom(...EXEC_TOOLS, 'sh', 'SIMCTL', ''), anyValue),
    args: fc.oneof(
      fc.array(fc.string({ maxLength: 40 }), { maxLength: 10 }),
      fc.array(fc.oneof(fc.string(), anyValue), { maxLength: 5 }),
      fc.constant(Array.from({ length: MAX_EXEC_ARGS + 1 }, () => 'x')),
      fc.constant(['y'.repeat(MAX_EXEC_ARG_LENGTH + 1)]),
      anyValue,
    ),
    timeoutSeconds: fc.oneof(fc.integer({ min: -5, max: 4000 }), fc.double(), anyValue),
    extra: anyValue,
    namespace: fc.oneof(fc.string({ maxLength: 70 }), anyValue),
    lease: fc.oneof(fc.string({ maxLength: 260 }), anyValue),
  },
  { requiredKeys: [] },
);

function withinBounds(request: ExecRequest): void {
  expect(EXEC_TOOLS).toContain(request.tool);
  expect(request.args.length).toBeLessThanOrEqual(MAX_EXEC_ARGS);
  for (const arg of request.args) {
    expect(typeof arg).toBe('string');
    expect(arg.length).toBeLessThanOrEqual(MAX_EXEC_ARG_LENGTH);
  }
  if (request.timeoutSeconds !== undefined) {
    expect(Number.isInteger(request.timeoutSeconds)).toBe(true);
    expect(request.timeoutSeconds).toBeGreaterThanOrEqual(1);
    expect(request.timeoutSeconds).toBeLessThanOrEqual(3600);
  }
}

describe('ExecRequest, fuzzed', () => {
  it('never throws; accepts only a known tool, bounded string args, a sane timeout, no extra keys', () => {
    fc.assert(
      fc.property(fc.oneof(anyValue, nearlyValid), (body) => {
        const parsed = ExecRequest.safeParse(body);
        if (!parsed.success) return;
        withinBounds(parsed.data);
        expect(
          Object.keys(parsed.data).every((key) => ['tool', 'args', 'timeoutSeconds'].includes(key)),
        ).toBe(true);
        expect(Object.keys(body as object)).not.toContain('extra');
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts every well-formed request as it is', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EXEC_TOOLS),
        fc.array(fc.string({ maxLength: 100 }), { maxLength: 20 }),
        fc.option(fc.integer({ min: 1, max: 3600 }), { nil: undefined }),
        (tool, args, timeoutSeconds) => {
          const body = { tool, args, ...(timeoutSeconds ? { timeoutSeconds } : {}) };
          expect(ExecRequest.parse(body)).toEqual(body);
        },
      ),
    );
  });

  it('the agent-side request also never throws and names a lease when it accepts', () => {
    fc.assert(
      fc.property(fc.oneof(anyValue, nearlyValid), (body) => {
        const parsed = AgentExecRequest.safeParse(body);
        if (!parsed.success) return;
        withinBounds(parsed.data);
        expect(parsed.data.namespace.length).toBeGreaterThan(0);
        expect(parsed.data.lease.length).toBeGreaterThan(0);
      }),
      { numRuns: 1000 },
    );
  });
});
