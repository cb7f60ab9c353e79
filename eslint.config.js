// ESLint: a few rules that find bugs tsc does not, type-aware over src/ and test/. Layout is Prettier's job
// (.prettierrc.json), so no stylistic rule here. `npm run lint`; docs/contributing.md says how to silence one.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// The project asks for a written reason beside every `any` and every silenced rule: a disable comment must
// say why after ` -- ` (`// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the JSON is checked below`).
// ESLint has no such core rule, and this one is too small to be worth a plugin dependency.
const house = {
  rules: {
    'disable-needs-reason': {
      meta: { type: 'problem', schema: [], messages: { reason: 'Say why after ` -- ` in this {{kind}} comment.' } },
      create(context) {
        return {
          Program() {
            for (const comment of context.sourceCode.getAllComments()) {
              const kind = /^\s*(eslint-disable(?:-next-line|-line)?)\b/.exec(comment.value)?.[1];
              if (kind && !/\s--\s*\S/.test(comment.value)) context.report({ loc: comment.loc, messageId: 'reason', data: { kind } });
            }
          },
        };
      },
    },
  },
};

// Rules for every file, typed or not.
const everywhere = {
  // Silencing a rule is allowed with a reason (house rule above); a silencer left after the code changed is noise.
  linterOptions: { reportUnusedDisableDirectives: 'error' },
  plugins: { house },
  rules: {
    'house/disable-needs-reason': 'error',
    // `==` coerces ('' == 0, '1' == 1); `== null` is the one idiom kept, it means "null or undefined".
    eqeqeq: ['error', 'always', { null: 'ignore' }],
    // A `let` never reassigned hides which bindings do change. One read before its assignment (a callback
    // that may run before the value exists, and checks for undefined) is the reason for a `let`, so kept.
    'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
  },
};

// A deliberate unused binding (a callback's parameter, a skipped array element) starts with `_`.
const unusedVars = ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }];

// Type-aware rules: the bugs here are about promises and types, which only the type checker can see.
const typed = {
  files: ['src/**/*.ts', 'test/**/*.ts', 'vitest.config.ts'],
  languageOptions: {
    parser: tseslint.parser,
    // tsconfig.test.json includes src/, test/ and vitest.config.ts with the same compiler options as the
    // build: one program for all of them. (projectService would pick the nearest tsconfig.json, which has no test/.)
    parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
  },
  plugins: { '@typescript-eslint': tseslint.plugin },
  rules: {
    // A promise nobody awaits or catches: its rejection is unhandled, which ends a Node process. Mark a
    // deliberate fire-and-forget with `void` (and handle its errors inside).
    '@typescript-eslint/no-floating-promises': 'error',
    // An async function where a void callback is expected (an event handler, setInterval, forEach): its
    // rejection goes nowhere, and the caller does not wait for it. A promise in an `if` is always true.
    '@typescript-eslint/no-misused-promises': 'error',
    // `await` on something that is not a promise is a misunderstanding of the API it calls.
    '@typescript-eslint/await-thenable': 'error',
    // `return promise` inside try/catch skips the catch (and the finally runs too early): await it there.
    // Only that: `return await` elsewhere is left to taste.
    '@typescript-eslint/return-await': ['error', 'error-handling-correctness-only'],
    // Dead code and forgotten variables (tsconfig has no noUnusedLocals).
    '@typescript-eslint/no-unused-vars': unusedVars,
    // Type-only imports marked `type`, so the import graph shows what a module needs at run time.
    // `typeof import('x')` stays allowed: it types a module loaded lazily with createRequire.
    '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
    // `any` switches the checker off. Where it is the right call, silence this rule on that line with the reason.
    '@typescript-eslint/no-explicit-any': 'error',
  },
};

export default [
  { ignores: ['dist/', 'node_modules/', '.tmp/', 'test-artifacts/'] },
  everywhere,
  typed,
  // Logs go through the structured logger (src/server/logger.ts) so they can be shipped; only the CLI,
  // which talks to the person at the terminal, prints directly.
  { files: ['src/**/*.ts'], ignores: ['src/cli/**'], rules: { 'no-console': 'error' } },
  // Plain JavaScript (bench/, bin/, examples/, the landing page's script): no types, so ESLint's own
  // recommended set, whose no-undef and no-unused-vars stand in for the checker.
  {
    files: ['bench/**/*.mjs', 'bin/**/*.js', 'examples/**/*.mjs', 'eslint.config.js'],
    rules: { ...js.configs.recommended.rules, 'no-unused-vars': unusedVars },
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: globals.node },
  },
  {
    files: ['static/**/*.js'],
    rules: { ...js.configs.recommended.rules, 'no-unused-vars': unusedVars },
    // uPlot comes from its own <script> tag before this one (src/landing/landing-page.ts).
    languageOptions: { ecmaVersion: 'latest', sourceType: 'script', globals: { ...globals.browser, uPlot: 'readonly' } },
  },
];
