/**
 * A real browser for the web page's tests: Debian's `chromium` (no downloaded browser), driven by
 * playwright-core, with a fresh profile directory. Closing it checks that no process of it is left.
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { type BrowserContext, chromium } from 'playwright-core';
import { liveProcessesWhose } from './share-helpers.js';

/** The browser the tests use. */
export const CHROMIUM = '/usr/bin/chromium';

/** Flags that work on this kind of machine (headless, no GPU, no network of its own). */
const FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A running browser and the way to close it. */
export interface TestBrowser {
  context: BrowserContext;
  /** Closes the browser and waits until none of its processes is left. */
  close(): Promise<void>;
}

/** True when the tests can run the browser here. */
export function haveChromium(): boolean {
  return existsSync(CHROMIUM);
}

/** Starts chromium with a fresh profile and a window of `viewport`. */
export async function launchBrowser(viewport = { width: 1400, height: 1000 }): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'conch-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport,
  });
  return {
    context,
    async close() {
      try {
        await context.close();
        await waitFor(() => liveProcessesWhose('cmdline', profile).length === 0, {
          what: 'no chromium process is left',
        });
      } finally {
        // A browser that did not end is a failure above; it must not outlive the test either.
        for (const pid of liveProcessesWhose('cmdline', profile)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
        rmSync(profile, { recursive: true, force: true });
      }
    },
  };
}
