import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { crdsFolder, renderCrds } from './generate-crds.js';

describe('crds/', () => {
  it('is exactly what npm run generate writes from api/ (run it and commit the result)', () => {
    const rendered = renderCrds();
    expect(readdirSync(crdsFolder).sort()).toEqual([...rendered.keys()].sort());
    for (const [file, text] of rendered) {
      expect(readFileSync(crdsFolder + file, 'utf8'), `crds/${file} is stale`).toBe(text);
    }
  });
});
