// Lint rules for every workspace: typescript-eslint's recommended set, type-aware where it pays.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The helpers of the tests and the bench (free ports, waiting, cleanup) are for them only: no
// service or shared production module may import them. Listed in every block that sets
// no-restricted-imports, since a later block replaces an earlier one's options for its files.
const noDevkit = { group: ['@collab/shared/devkit', '**/devkit/**', '**/devkit'], message: 'The devkit is for tests and the bench, never production code.' };

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', '.data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', AbortSignal: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', Headers: 'readonly', Response: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-unsafe-function-type': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['services/*/src/**/*.ts', 'shared/src/**/*.ts'],
    ignores: ['shared/src/devkit/**', '**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noDevkit] }] },
  },
  // The layers of a service call one way only: http and jobs -> domain -> repositories. A
  // repository holds no product rule and knows nothing of the use cases or the entry points that
  // call it; a use case knows nothing of the HTTP handlers or job processors that call it.
  {
    files: ['services/*/src/repositories/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            noDevkit,
            {
              regex: '^\\.{1,2}/(.*/)?(domain|http|jobs)(/|\\.js$)',
              message: 'Repositories are the lowest layer: they must not import domain, http or jobs code.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['services/*/src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            noDevkit,
            {
              regex: '^\\.{1,2}/(.*/)?(http|jobs)(/|\\.js$)',
              message: 'Use cases are called by http handlers and job processors, never the other way: domain must not import them.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
