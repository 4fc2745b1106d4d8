import { describe, expect, it } from 'vitest';
import { waitFor } from './readiness.js';

/** A check that gives these answers in turn (undefined: ready). */
function answering(...answers: (string | undefined)[]): () => Promise<string | undefined> {
  let index = 0;
  return () => Promise.resolve(answers[Math.min(index++, answers.length - 1)]);
}

describe('waitFor', () => {
  it('tells each answer in a row once, with how long it lasted', async () => {
    const story = await waitFor(
      'kube-apiserver',
      answering(
        'no answer: connect ECONNREFUSED',
        'no answer: connect ECONNREFUSED',
        'HTTP 500: [-]etcd failed',
        undefined,
      ),
      5000,
      () => undefined,
    );
    expect(story).toMatch(
      /^no answer: connect ECONNREFUSED 0\.\d s; HTTP 500: \[-\]etcd failed 0\.\d s$/,
    );
  });

  it('answers an empty story when ready at once', async () => {
    expect(await waitFor('etcd', answering(undefined), 5000, () => undefined)).toBe('');
  });

  it('fails past its deadline with the answers it had', async () => {
    await expect(
      waitFor(
        'kube-apiserver',
        answering('HTTP 500: [-]poststarthook/rbac failed'),
        250,
        () => undefined,
      ),
    ).rejects.toThrow(
      /^kube-apiserver: not ready within 250 ms; its answers: HTTP 500: \[-\]poststarthook\/rbac failed 0\.\d s$/,
    );
  });

  it('fails at once when the process died', async () => {
    await expect(
      waitFor('kube-apiserver', answering('no answer'), 5000, () => 'kube-apiserver exited (1)'),
    ).rejects.toThrow('kube-apiserver: kube-apiserver exited (1)');
  });
});
