/** `conch exec --sandbox*` and `conch sessions` with a sandboxed session (docs/sandbox.md), on real bubblewrap. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliHome, createHome } from './harness.js';

let home: CliHome;
beforeAll(() => {
  home = createHome();
});
afterAll(async () => {
  await home.dispose();
});

describe('conch exec --sandbox', () => {
  it('runs in a sandboxed session it creates, keeps the exit code, and says why it failed', async () => {
    const run = await home.conch(['exec', '--sandbox', '--', 'touch /etc/conch-sandbox-test']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("sandbox: /etc/conch-sandbox-test is outside the sandbox's writable paths");
    // The same session again (named "sandbox"): its shell is pid 2 of its own PID namespace.
    const again = await home.conch(['exec', '--sandbox', '--', 'echo $$']);
    expect(again).toMatchObject({ code: 0, stdout: '2\n' });
    const sessions = await home.conch(['sessions']);
    expect(sessions.stdout).toMatch(/sandbox\s.*writes .*network none/);
  });

  it('refuses to sandbox a session that exists unsandboxed', async () => {
    expect((await home.conch(['exec', '--', 'true'])).code).toBe(0);
    const run = await home.conch(['exec', '--session', 'default', '--sandbox-network', 'none', '--', 'true']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("a session's sandbox never changes");
  });
});
