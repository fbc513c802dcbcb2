/**
 * The web page of `conch web`: every session of the daemon, a live terminal for the chosen ones, each
 * session's command timeline with its output paged from the log, and the policy's decisions. It holds no
 * session data until its WebSocket is open, and opens it only with the token from the link `conch web`
 * printed (kept in this tab's session storage, and taken out of the address bar).
 */

import '@xterm/xterm/css/xterm.css';
import '../style.css';
import { ATTACH_METHODS } from '../../src/attach-methods.js';
import {
  OUTPUT_PAGE_LINES,
  WEB_METHODS,
  type WebChanges,
  type WebCommand,
  type WebRecord,
  type WebSession,
  type WebState,
} from '../../src/web/protocol.js';
import { fill, h } from './dom.js';
import { cut, formatBytes, formatDuration, formatTime } from './format.js';
import { PageConnection } from './rpc.js';
import { TerminalView, ViewRouter } from './terminal-view.js';
import { type TimelineRow, timelineOf } from './timeline.js';

/** Sessions whose terminal opens by itself when the page loads (more can be opened by hand). */
const AUTO_OPEN = 4;
/** Timeline rows and records shown at most. */
const TIMELINE_ROWS = 50;
const RECORD_ROWS = 100;

const TOKEN_KEY = 'conch-token';

/** The token: from the link's fragment (then out of the address bar), else from this tab's storage. */
function takeToken(): string | undefined {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match?.[1]) {
    const token = decodeURIComponent(match[1]);
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', location.pathname);
    return token;
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** One open session: its panel, its live view, its notices. */
interface Panel {
  element: HTMLElement;
  view: TerminalView;
  head: HTMLElement;
  notices: HTMLElement;
  timeline: HTMLElement;
  /** What the head shows now. */
  headKey?: string;
  /** What the timeline shows now (running commands' durations aside, which are updated in place). */
  timelineKey?: string;
}

class Page {
  #state: WebState | undefined;
  readonly #commands = new Map<string, WebCommand>();
  readonly #panels = new Map<string, Panel>();
  /** Sessions whose panel the person closed (not opened again by themselves). */
  readonly #dismissed = new Set<string>();
  readonly #router = new ViewRouter();

  constructor(private readonly rpc: PageConnection) {
    for (const method of [
      ATTACH_METHODS.output,
      ATTACH_METHODS.command,
      ATTACH_METHODS.closed,
      ATTACH_METHODS.dropped,
    ])
      rpc.on(method, (params) => this.#router.route(method, params));
    rpc.on(WEB_METHODS.changed, (params) => this.#apply(params as WebChanges));
    setInterval(() => this.#renderTimelines(), 1000);
  }

  async start(): Promise<void> {
    const state = await this.rpc.request<WebState>(WEB_METHODS.watch);
    this.#state = state;
    for (const c of state.commands) this.#commands.set(c.command_id, c);
    this.#render();
  }

  #apply(changes: WebChanges): void {
    const state = this.#state;
    if (!state) return;
    if (changes.sessions) state.sessions = changes.sessions;
    for (const c of changes.commands ?? []) this.#commands.set(c.command_id, c);
    for (const id of changes.removed_commands ?? []) this.#commands.delete(id);
    if (changes.records) {
      state.records.push(...changes.records);
      if (state.records.length > 1000) state.records.splice(0, state.records.length - 1000);
    }
    this.#render();
  }

  #render(): void {
    const state = this.#state;
    if (!state) return;
    const open = state.sessions.filter((s) => s.state !== 'closed');
    $('daemon').textContent =
      `daemon pid ${state.daemon.pid} · conch ${state.daemon.version} · ${open.length} session${open.length === 1 ? '' : 's'}`;
    this.#renderSessions(state.sessions);
    // Panels: the first sessions open by themselves; a closed session's panel goes.
    for (const session of state.sessions) {
      if (this.#panels.has(session.session_id) || this.#dismissed.has(session.session_id)) continue;
      if (session.state === 'closed' || this.#panels.size >= AUTO_OPEN) continue;
      this.#openPanel(session);
    }
    for (const id of this.#panels.keys()) {
      if (!state.sessions.some((s) => s.session_id === id)) this.#closePanel(id);
      else this.#renderHead(id);
    }
    this.#renderTimelines();
    this.#renderRecords(state);
  }

  #sessionsKey: string | undefined;

  #renderSessions(sessions: WebSession[]): void {
    const list = $('sessions');
    // Rebuilt only when a card changes (a card replaced under the pointer would lose its click).
    const key = JSON.stringify([
      sessions,
      [...this.#panels.keys()],
      [...this.#commands.values()].map((c) => c.state),
    ]);
    if (key === this.#sessionsKey) return;
    this.#sessionsKey = key;
    if (sessions.length === 0) {
      fill(
        list,
        h('p', { class: 'empty' }, 'No sessions yet: an agent’s first command opens the default one.'),
      );
      return;
    }
    fill(
      list,
      ...sessions.map((s) => {
        const facts: Array<[string, string]> = [['kind', s.kind]];
        facts.push(['cwd', s.cwd ?? '?']);
        facts.push(['shell', s.shell]);
        if (s.host)
          facts.push(['host', `${s.username ? `${s.username}@` : ''}${s.host}${s.port ? `:${s.port}` : ''}`]);
        for (const key of ['container', 'image', 'sandbox'] as const)
          if (s[key] !== undefined)
            facts.push([key, typeof s[key] === 'string' ? (s[key] as string) : JSON.stringify(s[key])]);
        const running = [...this.#commands.values()].filter(
          (c) => c.session_id === s.session_id && (c.state === 'running' || c.state === 'awaiting_input'),
        ).length;
        const people = s.attached
          ? `${s.attached.viewers} watching${s.attached.holds_terminal ? ' · a person holds the terminal' : ''}`
          : 'nobody watching';
        const card = h(
          'button',
          {
            class: `session${this.#panels.has(s.session_id) ? ' open' : ''}`,
            'data-session': s.session_id,
            title: this.#panels.has(s.session_id) ? 'Close its terminal' : 'Open its terminal and timeline',
          },
          h('span', { class: 'name' }, s.name === s.session_id ? s.name : `${s.name} (${s.session_id})`),
          h('span', { class: `state ${s.state}` }, s.state),
          h('dl', {}, ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', { title: v }, cut(v, 80))])),
          h('span', { class: 'people' }, people),
          running > 0 ? h('span', { class: 'running' }, `${running} running`) : null,
        );
        card.addEventListener('click', () => {
          if (this.#panels.has(s.session_id)) {
            this.#dismissed.add(s.session_id);
            this.#closePanel(s.session_id);
          } else {
            this.#dismissed.delete(s.session_id);
            this.#openPanel(s);
          }
          this.#renderSessions(this.#state?.sessions ?? []);
          this.#renderTimelines();
        });
        return card;
      }),
    );
  }

  #openPanel(session: WebSession): void {
    const id = session.session_id;
    const notices = h('div', { class: 'notices' });
    const head = h('div', { class: 'panel-head' });
    const timeline = h('div', { class: 'timeline' });
    const view = new TerminalView(this.rpc, this.#router, id, {
      notice: (text) => {
        notices.append(h('div', {}, `${formatTime(new Date().toISOString())} ${text}`));
        while (notices.childElementCount > 5) notices.firstElementChild?.remove();
      },
      changed: () => this.#renderHead(id),
    });
    const element = h(
      'article',
      { class: 'panel', 'data-session': id },
      head,
      notices,
      view.element,
      timeline,
    );
    this.#panels.set(id, { element, view, head, notices, timeline });
    $('panels').append(element);
    this.#renderHead(id);
    view.attach(false).catch((error: Error) => {
      notices.append(h('div', { class: 'error' }, `[cannot watch: ${error.message}]`));
    });
  }

  #closePanel(id: string): void {
    const panel = this.#panels.get(id);
    if (!panel) return;
    this.#panels.delete(id);
    panel.view.dispose();
    panel.element.remove();
  }

  #renderHead(id: string): void {
    const panel = this.#panels.get(id);
    const session = this.#state?.sessions.find((s) => s.session_id === id);
    if (!panel || !session) return;
    const { view } = panel;
    // Rebuilt only when what it shows changes (a button replaced under the pointer would lose its click).
    const key = JSON.stringify([session.name, session.state, view.closed, view.input, view.readOnlyReason]);
    if (panel.headKey === key) return;
    panel.headKey = key;
    const mode = view.closed
      ? h('span', { class: 'mode' }, 'the shell ended')
      : view.input
        ? h('span', { class: 'mode typing' }, 'you have the keyboard')
        : h('span', { class: 'mode', title: view.readOnlyReason ?? '' }, 'watching (read-only)');
    const button = view.closed
      ? null
      : view.input
        ? h('button', { class: 'release' }, 'Give the keyboard back')
        : h('button', { class: 'take-over' }, 'Take over');
    button?.addEventListener('click', () => {
      if (view.input)
        void view
          .attach(false)
          .catch((error: Error) => panel.notices.append(h('div', { class: 'error' }, error.message)));
      else void this.#confirmTakeOver(session, view, panel);
    });
    const close = h(
      'button',
      { class: 'close', title: 'Close this terminal (the session keeps running)' },
      '×',
    );
    close.addEventListener('click', () => {
      this.#dismissed.add(id);
      this.#closePanel(id);
      this.#renderSessions(this.#state?.sessions ?? []);
    });
    fill(
      panel.head,
      h('span', { class: 'name' }, session.name === id ? id : `${session.name} (${id})`),
      h('span', { class: `state ${session.state}` }, session.state),
      mode,
      h('span', { class: 'spacer' }),
      button,
      close,
    );
  }

  async #confirmTakeOver(session: WebSession, view: TerminalView, panel: Panel): Promise<void> {
    const dialog = $<HTMLDialogElement>('confirm');
    fill(
      $('confirm-session'),
      session.name === session.session_id ? session.name : `${session.name} (${session.session_id})`,
    );
    dialog.returnValue = '';
    dialog.showModal();
    await new Promise<void>((resolve) => dialog.addEventListener('close', () => resolve(), { once: true }));
    if (dialog.returnValue !== 'take-over') return;
    try {
      await view.attach(true);
    } catch (error) {
      panel.notices.append(h('div', { class: 'error' }, `[cannot take over: ${(error as Error).message}]`));
    }
  }

  #renderTimelines(): void {
    const state = this.#state;
    if (!state) return;
    const commands = [...this.#commands.values()];
    const now = Date.now();
    for (const [id, panel] of this.#panels) {
      const session = state.sessions.find((s) => s.session_id === id);
      if (!session) continue;
      const rows = timelineOf(session, commands, state.records, now);
      const shown = rows.slice(-TIMELINE_ROWS);
      // Rebuilt only when a row changes (a row replaced under the pointer would lose its click); the
      // durations of running commands tick in place.
      const running = (row: TimelineRow) => row.state === 'running' || row.state === 'awaiting_input';
      const key = JSON.stringify([
        rows.length,
        shown.map((row) => (running(row) ? { ...row, duration_ms: 0 } : row)),
      ]);
      if (panel.timelineKey === key) {
        for (const row of shown.filter(running)) {
          const cell = panel.timeline.querySelector(`tr[data-key="${CSS.escape(row.key)}"] td.took`);
          if (cell) cell.textContent = formatDuration(row.duration_ms ?? 0);
        }
        continue;
      }
      panel.timelineKey = key;
      fill(
        panel.timeline,
        rows.length === 0
          ? h('p', { class: 'empty' }, 'No commands yet.')
          : h(
              'table',
              {},
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ...['time', 'who', 'command', 'state', 'exit', 'took', 'output'].map((t) => h('th', {}, t)),
                ),
              ),
              h('tbody', {}, ...shown.map((row) => this.#timelineRow(row))),
            ),
        rows.length > shown.length
          ? h('p', { class: 'more' }, `${rows.length - shown.length} earlier not shown`)
          : null,
      );
    }
  }

  #timelineRow(row: TimelineRow): HTMLElement {
    const exit =
      row.exit_code === undefined ? '' : row.exit_code === null ? (row.signal ?? '?') : String(row.exit_code);
    const tr = h(
      'tr',
      { class: `row ${row.who} ${row.state}`, 'data-command': row.command_id, 'data-key': row.key },
      h('td', { class: 'time' }, formatTime(row.time)),
      h('td', { class: 'who' }, row.who),
      h(
        'td',
        { class: 'text', title: row.text },
        cut(row.text, 200),
        ...row.how.map((how) => h('span', { class: 'how' }, how)),
      ),
      h('td', { class: 'st' }, row.state),
      h('td', { class: `exit${exit !== '' && exit !== '0' ? ' failed' : ''}` }, exit),
      h('td', { class: 'took' }, row.duration_ms === undefined ? '' : formatDuration(row.duration_ms)),
      h('td', { class: 'size' }, row.output_bytes === undefined ? '' : formatBytes(row.output_bytes)),
    );
    if (row.command_id) {
      tr.title = 'Show its output';
      tr.addEventListener(
        'click',
        () => void this.#showOutput(row.command_id!, row.text, -OUTPUT_PAGE_LINES),
      );
    }
    return tr;
  }

  async #showOutput(commandId: string, text: string, offset: number): Promise<void> {
    const dialog = $<HTMLDialogElement>('output');
    fill($('output-title'), cut(text, 300));
    let page:
      | { from_line: number; to_line: number; total_lines: number; remaining_lines: number }
      | undefined;
    let header = '';
    try {
      const result = await this.rpc.request<{ output: string; page?: typeof page; page_header?: string }>(
        WEB_METHODS.output,
        {
          command_id: commandId,
          offset,
          length: OUTPUT_PAGE_LINES,
        },
      );
      page = result.page;
      header = result.page_header ?? '';
      fill($('output-text'), result.output);
    } catch (error) {
      fill($('output-text'), h('span', { class: 'error' }, (error as Error).message));
    }
    const earlier = h('button', { type: 'button' }, '◀ earlier');
    const later = h('button', { type: 'button' }, 'later ▶');
    earlier.toggleAttribute('disabled', !page || page.from_line <= 0);
    later.toggleAttribute('disabled', !page || page.remaining_lines <= 0);
    earlier.addEventListener('click', () => {
      if (page) void this.#showOutput(commandId, text, Math.max(0, page.from_line - OUTPUT_PAGE_LINES));
    });
    later.addEventListener('click', () => {
      if (page) void this.#showOutput(commandId, text, page.to_line + 1);
    });
    fill($('output-nav'), earlier, h('span', {}, header), later);
    if (!dialog.open) dialog.showModal();
  }

  #renderRecords(state: WebState): void {
    const { policy } = state;
    fill(
      $('policy'),
      policy.active
        ? `Command policy: ${policy.allow.length} allow rule${policy.allow.length === 1 ? '' : 's'}${policy.allow.length ? ` (${policy.allow.join(', ')})` : ''}, ${policy.deny.length} deny rule${policy.deny.length === 1 ? '' : 's'}${policy.deny.length ? ` (${policy.deny.join(', ')})` : ''}.`
        : 'No command policy: every command is allowed (and still recorded here).',
      policy.audit_log
        ? ` Audit log: ${policy.audit_log}.`
        : ' No audit log file is configured; these records are kept in memory.',
    );
    const records = state.records.slice(-RECORD_ROWS).reverse();
    fill(
      $('records'),
      records.length === 0
        ? h('p', { class: 'empty' }, 'Nothing decided yet.')
        : h(
            'table',
            {},
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ...['time', 'who', 'what', 'session', 'decision', 'input', 'reason'].map((t) =>
                  h('th', {}, t),
                ),
              ),
            ),
            h('tbody', {}, ...records.map((r) => this.#recordRow(r))),
          ),
    );
  }

  #recordRow(r: WebRecord): HTMLElement {
    return h(
      'tr',
      { class: `record ${r.decision}` },
      h('td', { class: 'time' }, formatTime(r.time)),
      h('td', {}, r.by ?? 'agent'),
      h('td', {}, r.kind),
      h('td', {}, r.session_id ?? ''),
      h('td', { class: `decision ${r.decision}` }, r.decision),
      h('td', { class: 'text', title: r.input }, cut(r.input, 200)),
      h('td', { class: 'reason', title: r.reason }, cut(r.reason, 160)),
    );
  }
}

/** Says what the page shows instead of sessions (no token, refused, disconnected). */
function say(kind: 'info' | 'error', text: string, detail?: string): void {
  fill($('status'), h('span', { class: kind }, text));
  if (detail !== undefined)
    fill($('panels'), h('div', { class: `message ${kind}` }, h('p', {}, text), h('p', {}, detail)));
}

async function boot(): Promise<void> {
  const token = takeToken();
  if (!token) {
    say(
      'error',
      'No token: this page shows nothing without one.',
      'Open the link `conch web` printed (it carries the token after #token=), or run conch web again.',
    );
    return;
  }
  const rpc = new PageConnection(token);
  try {
    await rpc.opened;
  } catch {
    sessionStorage.removeItem(TOKEN_KEY);
    say(
      'error',
      'The daemon refused the connection.',
      'The token may be wrong or old (a new daemon has a new one), or the page is no longer served: run conch web again and open the link it prints.',
    );
    return;
  }
  rpc.onclose = () => say('error', 'Disconnected from the daemon: reload the page (or run conch web again).');
  say('info', 'live');
  await new Page(rpc).start();
}

// A new link pasted into this tab (only its fragment changes): start again with its token.
window.addEventListener('hashchange', () => {
  if (/(?:^#|&)token=/.test(location.hash)) location.reload();
});
void boot();
