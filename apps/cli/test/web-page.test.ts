/**
 * The web page of `conch web` in a real browser (Debian's chromium, driven by playwright-core): nothing of
 * a session reaches a page without the token; with it the page lists the sessions, an agent's command
 * (through `conch mcp --daemon`) shows in the timeline with its exit code and its output in the live
 * terminal, and a person who takes over types into the session while the agent's next command runs
 * isolated beside them. The screenshot of docs/web.md is taken here (written there with
 * CONCH_UPDATE_SCREENSHOTS=1). No browser or daemon is left behind.
 */

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveChromium, launchBrowser, type TestBrowser } from './browser.js';
import { type CliHome, createHome, relayClient } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const DOCS_SCREENSHOT = resolve(here, '../../../docs/web.png');
/** A bound on waiting for what the page shows (a condition, not a timing assertion). */
const SHOWS = { timeout: 20_000 };

let home: CliHome;
let browser: TestBrowser;
let agent: Client;
let link: string;
let sessionId: string;
const shots = mkdtempSync(join(tmpdir(), 'conch-web-shots-'));

/** The agent's `execute` through `conch mcp --daemon`. */
async function execute(command: string, session = sessionId): Promise<Record<string, unknown>> {
  const result = await agent.callTool({ name: 'execute', arguments: { command, session_id: session } });
  return result.structuredContent as Record<string, unknown>;
}

/** The text of a session panel's live terminal. */
async function terminalText(page: Page, id = sessionId): Promise<string> {
  return (await page.locator(`.panel[data-session="${id}"] .xterm-rows`).textContent()) ?? '';
}

beforeAll(async () => {
  if (!haveChromium())
    throw new Error('/usr/bin/chromium is missing: apt-get install chromium (.ci/run does).');
  home = createHome();
  const web = await home.conch(['web', '--no-open']);
  expect(web.code, web.stderr).toBe(0);
  link = web.stdout.trim();
  expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{20,}$/);
  ({ client: agent } = await relayClient(home));
  const created = await agent.callTool({
    name: 'create_local',
    arguments: { name: 'web-demo', cols: 110, rows: 16 },
  });
  sessionId = (created.structuredContent as { session_id: string }).session_id;
  await execute('git --version >/dev/null; echo the default session', 'default');
  browser = await launchBrowser();
});

afterAll(async () => {
  await agent?.close();
  await browser?.close();
  await home?.dispose();
  rmSync(shots, { recursive: true, force: true });
});

describe('conch web in a browser', () => {
  it('without the token no session data reaches the browser: the stream is refused', async () => {
    const page = await browser.context.newPage();
    const frames: string[] = [];
    page.on('websocket', (ws) => ws.on('framereceived', (frame) => frames.push(String(frame.payload))));
    const base = link.replace(/#.*$/, '');

    await page.goto(base);
    await page.getByText('No token: this page shows nothing without one.').first().waitFor(SHOWS);
    expect(await page.content()).not.toContain('web-demo');

    await page.goto(`${base}#token=not-the-token-of-this-daemon`);
    await page.getByText('The daemon refused the connection.').first().waitFor(SHOWS);
    expect(await page.content()).not.toContain('web-demo');
    // The stream itself, asked from the page's own origin without the token or with a wrong one.
    const refused = await page.evaluate(
      async (url) => {
        const attempt = (protocols: string[]) =>
          new Promise<string>((done) => {
            const ws = new WebSocket(url, protocols);
            ws.onopen = () => done('open');
            ws.onmessage = (e) => done(`message ${String(e.data)}`);
            ws.onclose = (e) => done(`closed ${e.code}`);
          });
        return [await attempt(['conch.v1']), await attempt(['conch.v1', 'conch.token.wrong-token-123456'])];
      },
      `${base.replace('http', 'ws')}ws`,
    );
    expect(refused).toEqual(['closed 1006', 'closed 1006']);
    expect(frames).toEqual([]);
    await page.close();
  });

  it('with the token it lists the sessions; an agent command shows in the timeline and the live terminal', async () => {
    const page = await browser.context.newPage();
    await page.goto(link);
    const card = page.locator(`.session[data-session="${sessionId}"]`);
    await card.getByText('web-demo').waitFor(SHOWS);
    // The token left the address bar (it stays in this tab's session storage).
    expect(page.url()).not.toContain('token');
    const panel = page.locator(`.panel[data-session="${sessionId}"]`);
    await panel.getByText('watching (read-only)').waitFor(SHOWS);

    const result = await execute('echo web-$((6*7))');
    expect(result).toMatchObject({ status: 'completed', exit_code: 0, output: 'web-42' });
    const row = panel.locator('tr.row.agent', { hasText: 'echo web-$((6*7))' });
    await row.locator('td.exit', { hasText: '0' }).waitFor(SHOWS);
    await expect.poll(() => terminalText(page), SHOWS).toContain('web-42');
    await expect(row.locator('td.who').textContent()).resolves.toBe('agent');

    // Its output, paged from the log.
    await row.click();
    await page.locator('#output-text', { hasText: 'web-42' }).waitFor(SHOWS);
    await expect(page.locator('#output-nav').textContent()).resolves.toContain(
      '[lines 0-0 of 1, 0 remaining]',
    );
    await page.locator('#output button[value="close"]').click();
    await page.close();
  });

  it("taking over types into the session; the agent's next command runs isolated, and the page shows both", async () => {
    await execute('cd /tmp && ls -d /usr/bin');
    const page = await browser.context.newPage();
    await page.goto(link);
    const panel = page.locator(`.panel[data-session="${sessionId}"]`);
    await panel.getByText('watching (read-only)').waitFor(SHOWS);

    await panel.getByRole('button', { name: 'Take over' }).click();
    const dialog = page.locator('dialog#confirm');
    await dialog.getByText('Your keystrokes go to its shell').waitFor(SHOWS);
    await dialog.getByRole('button', { name: 'Take over' }).click();
    await panel.getByText('you have the keyboard').waitFor(SHOWS);

    await page.keyboard.type('echo person-$((5+5)); sleep 600');
    await page.keyboard.press('Enter');
    await expect.poll(() => terminalText(page), SHOWS).toContain('person-10');
    await page
      .locator(`.session[data-session="${sessionId}"]`)
      .getByText('a person holds the terminal')
      .waitFor(SHOWS);

    const agentCommand = await execute('echo agent-$((2+3))');
    expect(agentCommand).toMatchObject({
      status: 'completed',
      exit_code: 0,
      output: 'agent-5',
      isolated: true,
      held_by_person: true,
    });
    const personRow = panel.locator('tr.row.person', { hasText: 'echo person-$((5+5)); sleep 600' });
    await personRow.waitFor(SHOWS);
    await expect(personRow.locator('td.who').textContent()).resolves.toBe('person');
    const agentRow = panel.locator('tr.row.agent', { hasText: 'echo agent-$((2+3))' });
    await agentRow.locator('.how', { hasText: 'a person held the terminal' }).waitFor(SHOWS);
    await agentRow.locator('td.exit', { hasText: '0' }).waitFor(SHOWS);
    await panel
      .locator('.notices', { hasText: '[agent, isolated, you hold the terminal] echo agent-$((2+3))' })
      .waitFor(SHOWS);
    // The person's line is recorded as theirs among the decisions.
    await page
      .locator('#records tr.record', { hasText: 'echo person-$((5+5)); sleep 600' })
      .getByText('person')
      .first()
      .waitFor(SHOWS);

    const shot = join(shots, 'web.png');
    await page.screenshot({ path: shot, fullPage: true });
    const png = readFileSync(shot);
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    if (process.env.CONCH_UPDATE_SCREENSHOTS === '1') copyFileSync(shot, DOCS_SCREENSHOT);

    // ctrl+c ends the person's sleep: the terminal is free again, and the agent's command types into it.
    await page.keyboard.press('Control+C');
    const card = page.locator(`.session[data-session="${sessionId}"]`);
    await expect.poll(async () => (await card.textContent()) ?? '', SHOWS).not.toContain('holds');
    await panel.getByRole('button', { name: 'Give the keyboard back' }).click();
    await panel.getByText('watching (read-only)').waitFor(SHOWS);
    const after = await execute('echo typed-again');
    expect(after).toMatchObject({ status: 'completed', output: 'typed-again' });
    expect(after.isolated).toBeUndefined();
    await page.close();
  });
});
