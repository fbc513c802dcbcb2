/** Test helpers of `@conch/delegate`: a scripted OpenAI-compatible model and an offline opencode env. */
export {
  FAKE_TITLE_MODEL,
  type FakeModel,
  type FakeRequest,
  type FakeTurn,
  startFakeModel,
} from './fake-model.js';
export {
  FAKE_MODEL,
  FAKE_PROVIDER,
  type OpencodeTestEnv,
  opencodeTestEnv,
  pathWithOpencode,
  processesUnder,
  withoutOpencode,
} from './opencode-env.js';
