import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokenCitations, checkRepository, designSections } from './citations.js';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('citations', () => {
  const context = {
    sections: designSections('# t\n## 3. Routing\n### 3.2 Why\n## 4. The controller\n'),
    adrs: new Set(['0001']),
    exists: (path: string) => path === 'docs/API.md',
  };

  it('accept a section, a document and an ADR the repository holds', () => {
    const text = '// DESIGN.md §3, DESIGN.md §3.2, DESIGN.md §4; see docs/API.md and ADR 0001';
    expect(brokenCitations('a.ts', text, context)).toEqual([]);
  });

  it('name each citation of what the repository lacks, with its file and line', () => {
    const text = 'ok\n// DESIGN.md §9 and seed 000 §3; docs/OPERATIONS.md; ADR 0042; ../shared/x';
    expect(brokenCitations('a.ts', text, context).map((broken) => broken.citation)).toEqual([
      'seed 000',
      '../shared',
      'DESIGN.md §9',
      'docs/OPERATIONS.md',
      'ADR 0042',
    ]);
    expect(brokenCitations('a.ts', text, context)[0]).toMatchObject({ file: 'a.ts', line: 2 });
  });

  it('find none in the repository', () => {
    const broken = checkRepository(root).map(
      ({ file, line, citation, why }) => `${file}:${line}: ${citation} (${why})`,
    );
    expect(broken).toEqual([]);
  });
});
