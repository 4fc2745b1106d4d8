// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layering rules of DESIGN.md §2 (and ADR 0002 for runtime/): folders reach each other only
// through their index.ts; api/ imports nothing of ours; runtime/ only api/; controller, agent,
// proxy, cli and console import api/ and runtime/ and never each other (the console's web page in
// console/web is bundled by Vite and imports api/ and console/model only). client/ (the typed
// client, `simlock/client`) imports api/ and runtime/; the plugin (cli/) is built on it, the one
// component that imports it (ADR 0010). Tests, tools and benchmarks may use any folder, through
// its index.
const folders = ['api', 'runtime', 'client', 'controller', 'agent', 'proxy', 'cli', 'console'];
/** @type {Record<string, string[]>} */
const mayImport = {
  api: [],
  runtime: ['api'],
  client: ['api', 'runtime'],
  controller: ['api', 'runtime'],
  agent: ['api', 'runtime'],
  proxy: ['api', 'runtime'],
  cli: ['api', 'runtime', 'client'],
  console: ['api', 'runtime'],
  e2e: folders,
  bench: folders,
  tools: folders,
  test: folders,
};

// Relative imports only: a package path such as `@modelcontextprotocol/sdk/client/stdio.js` is
// not our client/.
/** @param {string} self */
function boundaries(self) {
  return folders
    .filter((other) => other !== self)
    .map((other) =>
      (mayImport[self] ?? []).includes(other)
        ? {
            regex: `^\\.\\.?/(.*/)?${other}/(?!index\\.js$)`,
            message: `Import ${other}/ only through ${other}/index.js.`,
          }
        : {
            regex: `^\\.\\.?/(.*/)?${other}(/|$)`,
            message: `${self}/ must not import ${other}/ (DESIGN.md §2).`,
          },
    );
}

// bench/ reaches the tests' machinery (test/, e2e/) and tools/ through their index.ts too, and its
// programs reach what they share (bench/harness/) through its index.ts: each index says what is
// used from outside. Other folders' test files may still import test/ files directly.
const benchThroughIndex = ['test', 'e2e', 'tools', 'harness'].map((other) => ({
  regex: `^\\.\\.?/(.*/)?${other}/(?!index\\.js$)`,
  message: `Import ${other}/ only through ${other}/index.js.`,
}));

// api/ is the contract: shapes and pure rules, no I/O (DESIGN.md §2). Its files may not import
// the network, the file system or processes, nor call fetch; a client that does lives in runtime/
// (runtime/exec-client.ts).
const noIoInApi = [
  {
    regex: '^(node:)?(http|https|http2|net|tls|dgram|dns|fs|child_process)(/.*)?$',
    message: 'api/ holds no I/O: network, files and processes belong in runtime/ (DESIGN.md §2).',
  },
  {
    regex: '^(undici|@kubernetes/client-node)(/.*)?$',
    message: 'api/ holds no I/O: HTTP clients belong in runtime/ (DESIGN.md §2).',
  },
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'crds/**',
      'charts/**',
      'bench/out/**',
      'console/web/dist/**',
      'dist/**',
    ],
  },
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
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  ...Object.keys(mayImport).map((self) => ({
    files: [`${self}/**/*.ts`, `${self}/**/*.tsx`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...boundaries(self),
            ...(self === 'api' ? noIoInApi : []),
            ...(self === 'bench' ? benchThroughIndex : []),
          ],
        },
      ],
    },
  })),
  {
    files: ['api/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource'].map((name) => ({
          name,
          message: 'api/ holds no I/O: HTTP clients belong in runtime/ (DESIGN.md §2).',
        })),
      ],
    },
  },
  {
    files: ['eslint.config.js', 'vitest.config.ts', 'bin/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  // bin/'s launcher and bundler run in plain Node before any TypeScript can (checked by @ts-check).
  {
    files: ['bin/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
