import { describe, expect, it } from 'vitest';
import type { PromptKind } from '../types.js';
import {
  classifyPrompt,
  classifyPromptDetailed,
  isCertainPrompt,
  PROMPT_TAIL_CHARS,
  PROMPT_TEXT_MAX,
  PromptClassifier,
  promptCertainty,
} from './prompt-classifier.js';

const positives: ReadonlyArray<readonly [string, PromptKind, string?]> = [
  // password
  ['Password:', 'password'],
  ['Password: ', 'password', 'Password:'],
  ['$ sudo ls\n[sudo] password for alice: ', 'password', '[sudo] password for alice:'],
  ['password for alice: ', 'password'],
  ["alice@example.com's password: ", 'password'],
  ["Enter passphrase for key '/home/alice/.ssh/id_ed25519': ", 'password'],
  ['Passphrase: ', 'password'],
  ['Enter PIN', 'password'],
  ["Enter PIN for 'PIV Card Holder pin (PIV_II)': ", 'password'],
  ['New password: ', 'password'],
  ['Retype new password: ', 'password'],
  ['(current) UNIX password: ', 'password'],
  ["Password for 'https://alice@github.com': ", 'password'],
  ['Enter password', 'password'],
  ['Verification code: ', 'password'],
  // yes/no
  ['Do you want to continue? [Y/n] ', 'yes_no'],
  ['Continue? [Y/n]', 'yes_no'],
  ['Remove it? [y/N] ', 'yes_no'],
  ['Proceed (y/n)? ', 'yes_no'],
  ['Overwrite file (y/n) [n]: ', 'yes_no'],
  ['Are you sure? (yes/no) ', 'yes_no'],
  [
    "The authenticity of host 'h (1.2.3.4)' can't be established.\nED25519 key fingerprint is SHA256:abc.\nAre you sure you want to continue connecting (yes/no/[fingerprint])? ",
    'yes_no',
    'Are you sure you want to continue connecting (yes/no/[fingerprint])?',
  ],
  ['Is this ok [y/d/N]: ', 'yes_no'],
  ['Save changes (y or n) ', 'yes_no'],
  ['Accept license? yes/no: ', 'yes_no'],
  ['Do you want to save the password? [y/N] ', 'yes_no'],
  // pager
  ['line 1\nline 2\n:', 'pager', ':'],
  ['line 1\n(END)', 'pager'],
  ['notes.txt (END)', 'pager'],
  ['--More--', 'pager'],
  ['--More--(50%)', 'pager'],
  ['lines 1-40', 'pager'],
  ['lines 1-40/200 20%', 'pager'],
  ['lines 161-200/200 (END)', 'pager'],
  [' Manual page ls(1) line 1 (press h for help or q to quit)', 'pager'],
  ['Press RETURN', 'pager'],
  ['(press RETURN)', 'pager'],
  ['HELP -- Press RETURN for more, or q when done', 'pager'],
  // repl
  ['Python 3.12.1\nType "help" for more information.\n>>> ', 'repl'],
  ['>>> ', 'repl'],
  ['>>> def f():\n... ', 'repl', '...'],
  ['In [3]: ', 'repl'],
  ['   ...: ', 'repl'],
  ['irb(main):001:0> ', 'repl'],
  ['irb(main):002:0* ', 'repl'],
  ['[1] pry(main)> ', 'repl'],
  ['mysql> ', 'repl'],
  ['    -> ', 'repl'],
  ['sqlite> ', 'repl'],
  ['postgres=# ', 'repl'],
  ['mydb=> ', 'repl'],
  ['postgres-# ', 'repl'],
  ['Welcome to Node.js v20.19.0.\nType ".help" for more information.\n> ', 'repl'],
  ['(Pdb) ', 'repl'],
  ['(gdb) ', 'repl'],
  ['ipdb> ', 'repl'],
  ['julia> ', 'repl'],
  ['127.0.0.1:6379> ', 'repl'],
  ['iex(1)> ', 'repl'],
  ['alice@host:~/src$ ', 'repl'],
  ['(venv) alice@host:~/src$ ', 'repl'],
  ['bash-5.2$ ', 'repl'],
  ['$ ', 'repl'],
  // press a key
  ['Press any key to continue . . . ', 'press_key'],
  ['press any key', 'press_key'],
  ['press enter to continue', 'press_key'],
  ['Press Enter to continue...', 'press_key'],
  ['Hit enter', 'press_key'],
  ['Hit any key to stop autoboot:  3', 'press_key'],
  ['Press ENTER or type command to continue', 'press_key'],
  ['Press <Enter> to exit', 'press_key'],
  // likely text
  ['Name: ', 'text'],
  ['Enter your name: ', 'text'],
  ['What is your name? ', 'text'],
  ['Username:', 'text'],
  ['Project name (my-app): ', 'text'],
  ['Are you sure? ', 'text'],
  ["rm: remove regular file 'a.txt'? ", 'text'],
  ['some output\nmore output\nCity: ', 'text', 'City:'],
];

const negatives: ReadonlyArray<readonly [string, string]> = [
  ['pytest collecting', '============ test session starts ============\ncollecting ... '],
  ['pytest collecting, no space', 'collecting ...'],
  ['an arrow in text', 'a -> b'],
  ['html', '<div>'],
  ['html with space', '<div> '],
  ['comparison', '2 > 1'],
  ['shell redirect in a log', 'echo hi > out.txt'],
  [
    'vite hint',
    '  VITE v5.0.0  ready in 300 ms\n\n  ➜  Local:   http://localhost:5173/\n  ➜  press h + enter to show help',
  ],
  ['press ctrl+c', 'Server running at http://localhost:3000\nPress Ctrl+C to stop'],
  ['press ctrl-c with colon', 'Press CTRL-C to quit: '],
  ['press q', 'press q to quit'],
  ['press h with a colon', 'Hint: press h for help: '],
  ['log line ending with colon and newline', 'Building:\n'],
  ['error line ending with colon and newline', 'error: the following files would be overwritten:\n'],
  ['password mentioned, newline after', 'Password:\n'],
  ['yes/no mentioned, newline after', 'Continue? [Y/n]\n'],
  ['empty', ''],
  ['only newlines', '\n\n'],
  ['trailing whitespace line', 'done\n   '],
  ['url', 'Listening on http://localhost:3000/'],
  ['url with query', 'see https://example.com/search?'],
  ['url ending with colon', 'proxy: http://proxy.local:'],
  ['download progress', 'Downloading: 45%'],
  ['progress with colon', 'Progress 45%: '],
  ['progress bar', '[=====>        ] 45%'],
  ['tqdm bar', ' 45%|████▌     | 45/100 [00:01<00:01, ETA: '],
  ['loading dots', 'Loading... '],
  ['ellipsis', 'Resolving dependencies…'],
  ['password success', 'passwd: all authentication tokens updated successfully.'],
  ['password updated', 'Password updated'],
  ['timestamped log with colon', '2024-01-01 10:00:00 INFO Connecting to: '],
  ['bracket time log', '[12:00:01] Compiling: '],
  ['log level', 'INFO: '],
  ['warning level', 'WARNING: disk almost full: '],
  ['pytest node id', 'tests/test_a.py::'],
  ['compiler progress', '   Compiling serde v1.0.193'],
  ['long line ending in colon', `${'x'.repeat(120)}: `],
  ['colon with two spaces', 'Name:  '],
  ['colon only, more text', 'Status: ok'],
  ['question mid-line', 'Why? Because.'],
  ['dots progress', '.....'],
  ['symbols only', '--: '],
  ['lone greater-than without space', '>'],
  ['git push output', 'To github.com:org/repo.git\n   a1b2c3d..e4f5a6b  main -> main'],
  ['make recipe', 'make[1]: Entering directory'],
  ['python traceback colon newline', 'Traceback (most recent call last):\n'],
];

describe('classifyPrompt: positives', () => {
  it('has at least 40 cases', () => {
    expect(positives.length).toBeGreaterThanOrEqual(40);
  });

  const cases = positives.map(([tail, kind, text]) => ({ tail, kind, text }));
  it.each(cases)('$tail → $kind', ({ tail, kind, text }) => {
    const got = classifyPrompt(tail);
    expect(got?.kind).toBe(kind);
    const lastLine = tail.slice(tail.lastIndexOf('\n') + 1).trim();
    expect(got?.text).toBe(text ?? lastLine);
  });
});

describe('classifyPrompt: negatives', () => {
  it('has at least 40 cases', () => {
    expect(negatives.length).toBeGreaterThanOrEqual(40);
  });

  it.each(negatives)('%s', (_label, tail) => {
    expect(classifyPrompt(tail)).toBeUndefined();
  });
});

describe('classifyPrompt: the tail', () => {
  it('only the unterminated last line counts', () => {
    expect(classifyPrompt('Password: \nok\n')).toBeUndefined();
    expect(classifyPrompt('Password: \nok')).toBeUndefined();
    expect(classifyPrompt('ok\nPassword: ')?.kind).toBe('password');
  });

  it('handles CRLF, carriage-return rewrites and stray escapes', () => {
    expect(classifyPrompt('hello\r\nName: ')?.kind).toBe('text');
    expect(classifyPrompt('Downloading 10%\rDownloading 100%\rContinue? [Y/n] ')?.kind).toBe('yes_no');
    expect(classifyPrompt('Continue? [Y/n] \rDownloading 50%')).toBeUndefined();
    expect(classifyPrompt('\x1b[1m\x1b[32m?\x1b[0m Password: \x1b[0m')).toEqual({
      kind: 'password',
      text: '? Password:',
    });
    expect(classifyPrompt('\x1b]0;title\x07>>> ')?.kind).toBe('repl');
  });

  it('looks only at the last 500 characters', () => {
    const prompt = `${'x'.repeat(PROMPT_TAIL_CHARS * 4)}\nPassword: `;
    expect(classifyPrompt(prompt)?.kind).toBe('password');
    // Python's "... " is a REPL prompt only right after a ">>> " line.
    expect(classifyPrompt('>>> if x:\n... ')?.kind).toBe('repl');
    expect(classifyPrompt('some output\n... ')).toBeUndefined();
  });

  it('trims the prompt text to about 200 characters, keeping its end', () => {
    const long = `${'a'.repeat(300)} (y/n)? `;
    const got = classifyPrompt(long);
    expect(got?.kind).toBe('yes_no');
    expect(got?.text.length).toBe(PROMPT_TEXT_MAX);
    expect(got?.text.endsWith('(y/n)?')).toBe(true);
    expect(got?.text.startsWith('…')).toBe(true);
  });

  it('looks only at the tail of huge and pathological input (what keeps it linear)', () => {
    const inputs = [
      'a'.repeat(2_000_000),
      `${'(y/'.repeat(500_000)}`,
      `${'['.repeat(500_000)}`,
      `${'alice@host '.repeat(100_000)}$`,
      `${':'.repeat(1_000_000)} `,
      `${'\x1b['.repeat(300_000)}`,
      `${'a '.repeat(500_000)}?`,
    ];
    for (const input of inputs) {
      expect(classifyPromptDetailed(input)).toEqual(classifyPromptDetailed(input.slice(-PROMPT_TAIL_CHARS)));
    }
  });
});

describe('certainty', () => {
  it('text is likely, everything else certain', () => {
    expect(promptCertainty('text')).toBe('likely');
    for (const kind of ['password', 'yes_no', 'pager', 'repl', 'press_key'] as const) {
      expect(promptCertainty(kind)).toBe('certain');
      expect(isCertainPrompt({ kind, text: '' })).toBe(true);
    }
    expect(isCertainPrompt({ kind: 'text', text: 'Name:' })).toBe(false);
    expect(classifyPromptDetailed('Name: ')).toEqual({ kind: 'text', text: 'Name:', certainty: 'likely' });
    expect(classifyPromptDetailed('Password: ')).toEqual({
      kind: 'password',
      text: 'Password:',
      certainty: 'certain',
    });
    expect(PromptClassifier.classify('>>> ')).toEqual({ kind: 'repl', text: '>>>' });
  });
});
