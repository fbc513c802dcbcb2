/**
 * The Waiter: docs/waiting.md exactly. A waiting call returns at the first of: the command exited (after its
 * output drained), it is awaiting input, `until` matched output that arrived in this call, `pause`
 * of output silence, `total` elapsed while output streamed, or the caller cancelled. Every timer goes
 * through the injected Clock, so the rules are tested exactly with a fake one.
 */

import type { Clock, TimerHandle } from '../clock.js';
import type { InputWaitEvidence } from '../driver.js';
import { classifyPrompt, isCertainPrompt } from '../input/prompt-classifier.js';
import { screenPromptLine } from '../output/compact-screen.js';
import type { CallContext, PromptInfo, WaitReason } from '../types.js';
import type { Command } from './command.js';
import type { TextPattern } from './user-pattern.js';

/** How one call waits. Times in milliseconds. */
export interface WaitSpec {
  /** Output silence that ends the call (`pause_timeout`). */
  pauseMs: number;
  /** Time after which the call ends if output arrived during it (`total_timeout`). */
  totalMs: number;
  /** Ends the call when it matches output that arrived in this call. */
  until?: TextPattern;
  /** Quiet time before a prompt is believed (`prompt_settle`). */
  settleMs: number;
  /**
   * True for calls that just sent input (`respond`, `send_control`): output before the call does not
   * count as quiet time, since the program has not reacted yet.
   */
  inputJustSent: boolean;
  /** Interval of progress callbacks. */
  progressMs: number;
}

/**
 * A wait that only the command's end (or `ms` passing) stops: no prompt, no pause and no progress count,
 * for the engine's own waits for an end marker after a kill.
 */
export function endOnlyWait(ms: number): WaitSpec {
  return { pauseMs: ms, totalMs: ms, settleMs: 1e9, inputJustSent: true, progressMs: 1e9 };
}

/** Why the call returned, and the prompt seen when it is `awaiting_input`. */
export interface WaitOutcome {
  reason: Exclude<WaitReason, 'background'>;
  prompt?: PromptInfo;
}

/** Characters of recent output kept to test `until` against. */
const UNTIL_WINDOW = 64 * 1024;
/** Characters of the output's tail the prompt classifier looks at. */
const PROMPT_TAIL = 600;
/** While quiet and not at a prompt, re-probe for input waits this often. */
const REPROBE_MS = 1000;

/** Waits on one command according to `spec` (see the module doc). */
export function waitForCommand(
  command: Command,
  spec: WaitSpec,
  clock: Clock,
  context: CallContext = {},
): Promise<WaitOutcome> {
  return new Promise<WaitOutcome>((resolve) => {
    const callStart = clock.now();
    let lastOutputAt = callStart;
    let outputArrived = false;
    // Quiet time counts from the last output, or from now when input was just sent.
    const quietSince = spec.inputJustSent ? callStart : Math.min(callStart, command.lastOutputAt);
    let probeGeneration = 0;
    let nextProbeAt = quietSince + spec.settleMs;
    let untilWindow = '';
    let untilCursor = command.log.cursor();
    let done = false;
    let timer: TimerHandle | undefined;
    let progressTimer: TimerHandle | undefined;

    const finish = (outcome: WaitOutcome) => {
      if (done) return;
      done = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      if (progressTimer !== undefined) clock.clearTimeout(progressTimer);
      dataSub.dispose();
      endSub.dispose();
      context.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };

    const onAbort = () => finish({ reason: 'cancelled' });

    const checkTimers = () => {
      if (done) return;
      const now = clock.now();
      if (now >= lastOutputAt + spec.pauseMs) return finish({ reason: 'silence' });
      if (outputArrived && now >= callStart + spec.totalMs) return finish({ reason: 'total_timeout' });
      if (now >= nextProbeAt) {
        nextProbeAt = now + REPROBE_MS;
        void probe();
      }
      schedule();
    };

    const schedule = () => {
      if (done) return;
      if (timer !== undefined) clock.clearTimeout(timer);
      const now = clock.now();
      let at = Math.min(lastOutputAt + spec.pauseMs, nextProbeAt);
      if (outputArrived) at = Math.min(at, callStart + spec.totalMs);
      timer = clock.setTimeout(checkTimers, Math.max(0, at - now));
    };

    const probe = async () => {
      const generation = ++probeGeneration;
      const outputMark = command.outputSeq;
      const fullScreen = command.fullScreen;
      const cleared = command.log.displayErases > 0 && command.log.redraws > 0;
      // A full-screen program's text is smeared redraws: its prompt is read off its screen instead.
      let screenLine: string | undefined;
      if (fullScreen || cleared) {
        const snapshot = await command.terminal.screen().catch(() => undefined);
        if (snapshot) screenLine = screenPromptLine(snapshot);
      }
      const tail = screenLine ?? command.log.tail(PROMPT_TAIL);
      const prompt = classifyPrompt(tail);
      let evidence: InputWaitEvidence = 'unknown';
      try {
        evidence = (await command.inputWaitEvidence()) ?? 'unknown';
      } catch {
        evidence = 'unknown';
      }
      let program: string | undefined;
      if (evidence === 'blocked_read' || evidence === 'polling') {
        program = await command.terminal.foregroundProgram().catch(() => undefined);
      }
      if (done || generation !== probeGeneration || command.outputSeq !== outputMark) return;
      const awaiting = decideAwaiting(evidence, prompt, screenLine ?? lastLineOf(tail), {
        program,
        fullScreen,
        cleared,
      });
      if (awaiting && command.markAwaitingInput(awaiting))
        finish({ reason: 'awaiting_input', prompt: awaiting });
    };

    const onData = () => {
      if (done) return;
      const now = clock.now();
      lastOutputAt = now;
      outputArrived = true;
      nextProbeAt = now + spec.settleMs;
      probeGeneration++;
      if (spec.until) {
        const { text, next } = command.log.readSince(untilCursor, {
          maxChars: UNTIL_WINDOW,
          maxLines: Number.POSITIVE_INFINITY,
        });
        untilCursor = next;
        untilWindow = (untilWindow + text).slice(-UNTIL_WINDOW);
        if (spec.until.test(untilWindow)) return finish({ reason: 'until_matched' });
      }
      if (now >= callStart + spec.totalMs) return finish({ reason: 'total_timeout' });
      schedule();
    };

    const dataSub = command.onOutput.on(onData);
    const endSub = command.onEnd.on(() => finish({ reason: 'exited' }));

    if (command.ended) return finish({ reason: 'exited' });
    if (context.signal?.aborted) return finish({ reason: 'cancelled' });
    context.signal?.addEventListener('abort', onAbort, { once: true });
    if (spec.pauseMs <= 0) return finish({ reason: 'silence' });

    if (context.onProgress) {
      const tick = () => {
        if (done) return;
        context.onProgress?.({ elapsed_ms: clock.now() - callStart, message: command.log.lastLine() });
        progressTimer = clock.setTimeout(tick, spec.progressMs);
      };
      progressTimer = clock.setTimeout(tick, spec.progressMs);
    }
    if (nextProbeAt <= callStart) {
      nextProbeAt = callStart + REPROBE_MS;
      void probe();
    }
    schedule();
  });
}

/** Programs that are pagers: waiting in one is a `pager` prompt whatever its status line says. */
const PAGERS = new Set(['less', 'more', 'most', 'pg', 'man']);
/** Interactive interpreters: waiting in one without a recognised prompt is a `repl` prompt. */
const REPLS = new Set([
  'python',
  'python3',
  'node',
  'irb',
  'psql',
  'mysql',
  'sqlite3',
  'ghci',
  'lua',
  'R',
  'gdb',
  'redis-cli',
]);

/** What else is known about the terminal when deciding (see {@link decideAwaiting}). */
export interface AwaitingContext {
  /** Name of the terminal's foreground program, when the host can tell. */
  program?: string | undefined;
  /**
   * True while a full-screen program runs (alternate screen, or cursor-addressed redraws: vim, less, top);
   * `lastLine` is then the last non-empty row of its screen.
   */
  fullScreen?: boolean;
  /**
   * True when the program cleared the whole display and homed the cursor (`top`'s first frame). A program
   * that did so and polls the terminal, with no prompt and not a pager or REPL, is a full-screen program
   * that has drawn its first frame: kind `screen`.
   */
  cleared?: boolean;
}

/**
 * Combines kernel evidence with the text classifier (kernel evidence measured on Linux: see docs/waiting.md). A blocked terminal read is certain;
 * a poll with the terminal among its fds counts with a prompt-looking tail, in a known pager or REPL, or
 * in a full-screen app, or in a program that cleared the display and homed the cursor (`top`'s first
 * frame): kind `screen`, unless its screen shows a certain prompt such as a password. With no kernel
 * evidence (SSH) only certain prompt kinds count; `no` (the program is busy elsewhere) is never awaiting.
 */
export function decideAwaiting(
  evidence: InputWaitEvidence,
  prompt: PromptInfo | undefined,
  lastLine: string,
  context: AwaitingContext = {},
): PromptInfo | undefined {
  const program = context.program?.replace(/^-/, '');
  if (evidence === 'blocked_read' || evidence === 'polling') {
    if (program !== undefined && PAGERS.has(program))
      return { kind: 'pager', text: prompt?.text ?? lastLine };
    const repl = program !== undefined && REPLS.has(program.replace(/[\d.]+$/, ''));
    const drawn = context.fullScreen || (evidence === 'polling' && context.cleared === true && !repl);
    if (drawn) return prompt && isCertainPrompt(prompt) ? prompt : { kind: 'screen', text: lastLine };
    if (prompt) return prompt;
    if (repl) return { kind: 'repl', text: lastLine };
    if (evidence === 'blocked_read') return { kind: 'text', text: lastLine };
    return undefined;
  }
  if (evidence === 'unknown') return prompt && isCertainPrompt(prompt) ? prompt : undefined;
  return undefined;
}

function lastLineOf(tail: string): string {
  const trimmed = tail.replace(/\n+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('\n') + 1).slice(-200);
}
