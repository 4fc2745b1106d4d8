// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layering rules of DESIGN.md §2: folders reach each other only through their index.ts; api/
// imports nothing of ours; controller, agent, proxy and cli never import each other.
const components = ['api', 'controller', 'agent', 'proxy', 'cli'];

/** @param {string} self */
function boundaries(self) {
  /** @type {{group: string[], message: string}[]} */
  const patterns = [];
  for (const other of components) {
    if (other === self) continue;
    if (self === 'api' || (other !== 'api' && self !== 'e2e' && self !== 'bench')) {
      patterns.push({
        group: [`**/${other}/**`, `**/${other}`],
        message: `${self}/ must not import ${other}/ (DESIGN.md §2).`,
      });
    } else {
      patterns.push({
        group: [`**/${other}/**`, `!**/${other}/index.js`],
        message: `Import ${other}/ only through ${other}/index.js.`,
      });
    }
  }
  return patterns;
}

export default tseslint.config(
  { ignores: ['node_modules/**', 'crds/**', 'charts/**', 'bench/out/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  ...[...components, 'e2e', 'bench', 'tools'].map((self) => ({
    files: [`${self}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: boundaries(self) }] },
  })),
  {
    files: ['eslint.config.js', 'vitest.config.ts'],
    ...tseslint.configs.disableTypeChecked,
  },
);
