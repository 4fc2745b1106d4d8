// Citations in the repository's code and docs must point at what the repository holds: a section of
// docs/DESIGN.md that exists, a document under docs/ that exists, an ADR that exists, and never a
// document kept outside the repository (the next maintainer could not follow it).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const SKIPPED_FOLDERS = new Set(['node_modules', '.git', '.simlock', 'out', 'dist']);
const TEXT_FILE = /\.(ts|tsx|js|md|yaml|yml|sh|json|tpl|txt|env)$|^Dockerfile$/;

export interface BrokenCitation {
  file: string;
  line: number;
  citation: string;
  why: string;
}

/** Every text file of the repository, as paths relative to `root`. */
export function repositoryFiles(root: string, folder = root): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_FOLDERS.has(entry.name))
        files.push(...repositoryFiles(root, join(folder, entry.name)));
    } else if (TEXT_FILE.test(entry.name) && entry.name !== 'package-lock.json') {
      files.push(relative(root, join(folder, entry.name)));
    }
  }
  return files;
}

/** The section numbers docs/DESIGN.md has: `## 4. …` gives "4", `### 4.3 …` gives "4.3". */
export function designSections(design: string): Set<string> {
  const sections = new Set<string>();
  for (const match of design.matchAll(/^#{2,4} (\d+(?:\.\d+)*)\.? /gm))
    sections.add(match[1] ?? '');
  return sections;
}

/** Documents the repository does not hold, as they get cited. */
const OUTSIDE = [
  { pattern: /\bseeds? 0\d\d\b/gi, why: 'a source document kept outside the repository' },
  { pattern: /\.\.\/shared\b/g, why: 'a folder outside the repository' },
  { pattern: /KUBERNETES-NOTES\.md/g, why: 'a document kept outside the repository' },
];

export function brokenCitations(
  file: string,
  text: string,
  context: { sections: Set<string>; exists: (path: string) => boolean; adrs: Set<string> },
): BrokenCitation[] {
  const broken: BrokenCitation[] = [];
  const lines = text.split('\n');
  lines.forEach((content, index) => {
    const at = (citation: string, why: string) =>
      broken.push({ file, line: index + 1, citation, why });
    for (const { pattern, why } of OUTSIDE) {
      for (const match of content.matchAll(pattern)) at(match[0], why);
    }
    for (const match of content.matchAll(/DESIGN\.md §(\d+(?:\.\d+)*)/g)) {
      if (!context.sections.has(match[1] ?? '')) at(match[0], 'no such section in docs/DESIGN.md');
    }
    for (const match of content.matchAll(/\bdocs\/([A-Z][A-Z-]*\.md)\b/g)) {
      if (!context.exists(`docs/${match[1] ?? ''}`)) at(match[0], 'no such document');
    }
    for (const match of content.matchAll(/\bADR (\d{4})\b/g)) {
      if (!context.adrs.has(match[1] ?? '')) at(match[0], 'no such ADR in docs/adr/');
    }
  });
  return broken;
}

/** Every broken citation under `root`. */
export function checkRepository(root: string): BrokenCitation[] {
  const designPath = join(root, 'docs/DESIGN.md');
  const sections = existsSync(designPath)
    ? designSections(readFileSync(designPath, 'utf8'))
    : new Set<string>();
  const adrs = new Set(
    readdirSync(join(root, 'docs/adr'))
      .map((name) => /^(\d{4})-/.exec(name)?.[1])
      .filter((number): number is string => number !== undefined),
  );
  const context = { sections, adrs, exists: (path: string) => existsSync(join(root, path)) };
  return repositoryFiles(root)
    .filter((file) => file !== 'tools/citations.ts' && file !== 'tools/citations.test.ts')
    .flatMap((file) => brokenCitations(file, readFileSync(join(root, file), 'utf8'), context));
}
