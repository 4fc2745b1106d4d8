import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SIMLOCK_VERSION } from '../api/index.js';
import { userAgent } from './user-agent.js';

describe('the User-Agent of our clients', () => {
  it("names the part, simlock's version, the platform and Node, as client-go does", () => {
    expect(userAgent('simlock-controller')).toBe(
      `simlock-controller/${SIMLOCK_VERSION} (${process.platform}/${process.arch}) node/${process.version}`,
    );
  });

  it('says the version package.json says: one version, whoever reads it', () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(SIMLOCK_VERSION).toBe(version);
  });
});
