import { test } from 'vitest';
import { Policy } from './index.js';
import { CORPUS } from '../test/corpus.js';
test('scratch', () => {
  const deny = new Policy({ deny: ['rm'] });
  const allow = new Policy({ allow: ['git', 'ls'] });
  let bad = 0;
  for (const e of CORPUS) {
    const d = deny.evaluate(e.command);
    const a = allow.evaluate(e.command);
    const dv = d.decision === 'allow' ? 'A' : 'D';
    const av = a.decision === 'allow' ? 'A' : 'D';
    if (dv !== e.denyRm || av !== e.allowGitLs) {
      bad++;
      console.log(JSON.stringify(e.command.slice(0, 100)), 'expected', e.denyRm, e.allowGitLs, 'got', dv, av, '\n  D:', d.reason, '\n  A:', a.reason);
    }
  }
  console.log('total', CORPUS.length, 'bad', bad);
});
