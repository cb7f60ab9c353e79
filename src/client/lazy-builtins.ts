// The Node builtins the client uses, fetched where they are first needed rather than by a static
// `import 'node:…'` at the top of a module. Why: at the client's import each static builtin import costs
// its compile and the ESM loader's wrapper module (node:crypto and node:fs were ~3 ms each, ~15 ms CPU in
// all), paid by every application, also one that never hashes a prompt or writes a log file.
// process.getBuiltinModule() (Node ≥ 20.16; engines is ^20.19 || >=22) returns the module synchronously,
// typed by @types/node as `typeof import('node:…')`, so callers keep strict types.

export const nodeCrypto = (): typeof import('node:crypto') => process.getBuiltinModule('node:crypto');
export const nodeFs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs');
export const nodeFsPromises = (): typeof import('node:fs/promises') => process.getBuiltinModule('node:fs/promises');
export const nodeModule = (): typeof import('node:module') => process.getBuiltinModule('node:module');
