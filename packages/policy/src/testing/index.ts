/**
 * `@conch/policy/testing`: the adversarial corpus (commands that fool parsers, with their verdicts), for the
 * policy's own tests and for tests that prove other layers hold against the same spellings (the sandbox).
 */
export { CORPUS, type CorpusEntry, type Verdict } from './corpus.js';
