/**
 * An offline OpenCode for tests: HOME and XDG dirs in a temp dir, `--pure`-style isolation, no models.dev
 * fetch, and one provider (`fake`, `@ai-sdk/openai-compatible`, bundled in opencode) pointing at a
 * {@link startFakeModel} server.
 */

import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pidsWithEnv } from '@conch/node/testing';
import { findOpencode, opencodeOnPath } from '../locate.js';
import { FAKE_TITLE_MODEL } from './fake-model.js';

/** The provider id of the fake model and its main model. */
export const FAKE_PROVIDER = 'fake';
/** The main model id of the fake provider. */
export const FAKE_MODEL = 'm1';

/** A temp HOME and project dir, and the environment that points opencode at them. */
export interface OpencodeTestEnv {
  /** The temp root (HOME lives under it). */
  root: string;
  /** A project directory for tasks (`dir`). */
  project: string;
  /** Environment for `opencode serve` (or a face that spawns it). */
  env: NodeJS.ProcessEnv;
  /** Removes the temp dirs. */
  cleanup(): void;
}

/**
 * Creates the temp dirs and the environment for an offline opencode talking to `baseURL`; `extraConfig` is
 * merged into its opencode.json (e.g. `permission` rules). The environment's PATH starts with the opencode
 * this package finds ({@link pathWithOpencode}): the faces (conch-mcp, the daemon) find it there.
 */
export function opencodeTestEnv(baseURL: string, extraConfig: Record<string, unknown> = {}): OpencodeTestEnv {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'conch-opencode-')));
  const home = join(root, 'home');
  const project = join(root, 'project');
  for (const dir of [home, project]) mkdirSync(dir, { recursive: true });
  const config = {
    ...extraConfig,
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: `${FAKE_PROVIDER}/${FAKE_MODEL}`,
    small_model: `${FAKE_PROVIDER}/${FAKE_TITLE_MODEL}`,
    provider: {
      [FAKE_PROVIDER]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fake',
        options: { baseURL, apiKey: 'fake-key' },
        models: {
          [FAKE_MODEL]: { name: 'Fake model', tool_call: true },
          [FAKE_TITLE_MODEL]: { name: 'Fake titles' },
        },
      },
    },
  };
  const env: NodeJS.ProcessEnv = {
    PATH: pathWithOpencode(join(root, 'bin')),
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_PURE: '1',
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
  };
  return {
    root,
    project,
    env,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * A PATH whose first directory, `dir` (created), holds `opencode`: the binary this package finds (PATH, or
 * the `opencode-ai` package installed next to it, a development dependency here), as a user who delegates
 * has it. Without one, `path` unchanged.
 */
export function pathWithOpencode(dir: string, path: string | undefined = process.env.PATH): string {
  const opencode = findOpencode();
  if (opencode === undefined) return path ?? '';
  mkdirSync(dir, { recursive: true });
  symlinkSync(opencode, join(dir, 'opencode'));
  return [dir, path].filter(Boolean).join(delimiter);
}

/**
 * Live (non-zombie) processes whose environment has `HOME=<root>/home`, the HOME of an
 * {@link opencodeTestEnv} rooted at `root`: the opencode server and its guard, so tests can check that
 * nothing they started is left.
 */
export function processesUnder(root: string): number[] {
  return pidsWithEnv('HOME', `${root}/home`);
}

/**
 * The environment variables that leave a process without OpenCode, as a user who never installed it: PATH
 * without the directories that hold an `opencode` binary, and no NODE_PATH (`pnpm exec` sets one that
 * reaches every package of the workspace, `opencode-ai` included). Merge them over an environment.
 */
export function withoutOpencode(path: string | undefined = process.env.PATH): {
  PATH: string;
  NODE_PATH: string;
} {
  return {
    PATH: (path ?? '')
      .split(delimiter)
      .filter((dir) => dir !== '' && opencodeOnPath(dir) === undefined)
      .join(delimiter),
    NODE_PATH: '',
  };
}
