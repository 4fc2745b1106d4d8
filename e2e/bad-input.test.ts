// Malformed LeaseRequests, refused by the API server itself (the CRD's schema and CEL rules, from
// api/schemas.ts), each refusal naming the field: a table, in the style of crds.test.ts.
import { describe, expect, it } from 'vitest';
import { KubeApiError, simlockPath } from '../runtime/index.js';
import { useCluster } from '../test/cluster/harness.js';
import { aLeaseRequest } from '../test/fixtures/objects.js';

const cluster = useCluster('badinput');

let count = 0;

/** Creates a LeaseRequest with this body; answers the API server's refusal message. */
async function refusal(
  body: Record<string, unknown>,
  query: Record<string, string> = {},
): Promise<string> {
  try {
    await cluster.admin.create(
      simlockPath('leaseRequest', { namespace: cluster.namespace }),
      {
        apiVersion: 'simlock.dev/v1alpha1',
        kind: 'LeaseRequest',
        metadata: { name: `bad-${++count}` },
        ...body,
      },
      { query },
    );
  } catch (error) {
    if (error instanceof KubeApiError) return error.message;
    throw error;
  }
  throw new Error(`the API server accepted ${JSON.stringify(body)}`);
}

const ios = { platform: 'ios' };

describe('malformed LeaseRequests, refused by the API server naming the field', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['no spec at all', {}, /spec: Required value/],
    ['a spec that is not an object', { spec: 'ios' }, /spec: Invalid value: "string"/],
    ['no platform', { spec: { model: 'iPhone 16' } }, /spec\.platform: Required value/],
    [
      'a platform in capitals',
      { spec: { platform: 'IOS' } },
      /spec\.platform: Unsupported value: "IOS"/,
    ],
    [
      'a platform that is a number',
      { spec: { platform: 1 } },
      /spec\.platform: Invalid value: "integer"/,
    ],
    [
      'an empty model',
      { spec: { ...ios, model: '' } },
      /spec\.model: Invalid value: "": spec\.model in body should be at least 1 chars long/,
    ],
    [
      'a model of 129 characters',
      { spec: { ...ios, model: 'x'.repeat(129) } },
      /spec\.model: Too long/,
    ],
    [
      'a class that is not phone or tablet',
      { spec: { ...ios, class: 'laptop' } },
      /spec\.class: Unsupported value: "laptop"/,
    ],
    [
      'an OS written as words',
      { spec: { ...ios, os: 'eighteen' } },
      /spec\.os: Invalid value: "eighteen": spec\.os in body should match/,
    ],
    [
      'an OS range with a bad operator',
      { spec: { ...ios, os: '=>18' } },
      /spec\.os: Invalid value: "=>18"/,
    ],
    ['an OS of 65 characters', { spec: { ...ios, os: '1'.repeat(65) } }, /spec\.os: Too long/],
    [
      'physical as a text',
      { spec: { ...ios, physical: 'yes' } },
      /spec\.physical: Invalid value: "string": spec\.physical in body must be of type boolean/,
    ],
    [
      'an empty capability',
      { spec: { ...ios, requires: [''] } },
      /spec\.requires\[0\]: Invalid value: ""/,
    ],
    [
      '17 capabilities',
      { spec: { ...ios, requires: Array.from({ length: 17 }, (_, i) => `c${i}`) } },
      /spec\.requires: Too many: 17: must have at most 16 items/,
    ],
    [
      'requires as a text',
      { spec: { ...ios, requires: 'camera' } },
      /spec\.requires: Invalid value: "string"/,
    ],
    [
      'noWait as a text',
      { spec: { ...ios, noWait: 'true' } },
      /spec\.noWait: Invalid value: "string"/,
    ],
    [
      'a wait timeout of 0',
      { spec: { ...ios, waitTimeoutSeconds: 0 } },
      /spec\.waitTimeoutSeconds: Invalid value: 0: spec\.waitTimeoutSeconds in body should be greater than or equal to 1/,
    ],
    [
      'a wait timeout above a day',
      { spec: { ...ios, waitTimeoutSeconds: 86_401 } },
      /spec\.waitTimeoutSeconds: Invalid value: 86401: spec\.waitTimeoutSeconds in body should be less than or equal to 86400/,
    ],
    [
      'a wait timeout with a fraction',
      { spec: { ...ios, waitTimeoutSeconds: 1.5 } },
      /spec\.waitTimeoutSeconds: Invalid value: "number": spec\.waitTimeoutSeconds in body must be of type integer/,
    ],
    [
      'a duration above a week',
      { spec: { ...ios, durationSeconds: 604_801 } },
      /spec\.durationSeconds: Invalid value: 604801: spec\.durationSeconds in body should be less than or equal to 604800/,
    ],
    [
      'a negative duration',
      { spec: { ...ios, durationSeconds: -1 } },
      /spec\.durationSeconds: Invalid value: -1/,
    ],
    [
      'a holder of 101 characters',
      { spec: { ...ios, holder: 'h'.repeat(101) } },
      /spec\.holder: Too long/,
    ],
  ])('refuses %s', async (_case, body, message) => {
    expect(await refusal(body)).toMatch(message);
  });

  it('refuses an unknown field when the client asks for strict field validation (kubectl does)', async () => {
    expect(
      await refusal({ spec: { ...ios, colour: 'red' } }, { fieldValidation: 'Strict' }),
    ).toMatch(/unknown field "spec\.colour"/);
  });

  it('refuses a name that is not a DNS subdomain, naming metadata.name', async () => {
    await expect(
      cluster.admin.create(
        simlockPath('leaseRequest', { namespace: cluster.namespace }),
        aLeaseRequest('Not_A_Name').spec(ios).obj(),
      ),
    ).rejects.toThrow(/metadata\.name: Invalid value: "Not_A_Name"/);
  });

  it('names every bad field of one request, not only the first', async () => {
    const message = await refusal({
      spec: { platform: 'windows', os: 'latest', durationSeconds: 0 },
    });
    expect(message).toMatch(/spec\.platform/);
    expect(message).toMatch(/spec\.os/);
    expect(message).toMatch(/spec\.durationSeconds/);
  });

  it('takes a well-formed request, so the refusals above are about their fields', async () => {
    await cluster.admin.create(
      simlockPath('leaseRequest', { namespace: cluster.namespace }),
      aLeaseRequest('good')
        .ios('iPhone 16')
        .waitTimeout(60)
        .duration(600)
        .spec({
          class: 'phone',
          os: '>=18 <19',
          physical: false,
          requires: ['camera'],
          noWait: true,
          holder: 'ci',
        })
        .obj(),
    );
  });
});
