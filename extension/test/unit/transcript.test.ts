import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTurns, renderTranscript, transcriptPath } from '../../src/views/transcript';
import { runTreeItem } from '../../src/views/runsTree';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { mock, Uri, workspace } from './vscode-mock';
import { RunController } from '../../src/commands/runCommands';
import { Log } from '../../src/log';

const turn = (seq: number, agent: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ seq, interactionId: 'i1', agent, from: 'engine', round: 1, backend: 'command', started: '2026-11-26T00:00:00Z', durationMs: 1500, status: 'completed', exitCode: 0, prompt: `prompt of ${agent} with [redacted:API_TOKEN]`, reply: 'ANSWER: 42 ```not a fence```', stderr: ['warming up'], ...extra });

test('transcript: one agent\'s turns as Markdown (prompt, reply, stderr), a crash-cut line ends the list', () => {
  const text = [turn(1, 'a'), turn(2, 'b'), turn(3, 'a', { status: 'failed', exitCode: 3, reason: 'exited with code 3', costUsd: 0.0123, inputTokens: 10, outputTokens: 5 }), '{"seq":4,"agent":"a","pro'].join('\n');
  const turns = parseTurns(text);
  assert.deepEqual(turns.map((t) => t.seq), [1, 2, 3]);
  const md = renderTranscript('run_1', 'a', turns);
  assert.match(md, /^# a — run run_1\n/);
  assert.match(md, /## Turn 1 /);
  assert.match(md, /## Turn 3 /);
  assert.doesNotMatch(md, /## Turn 2 /, 'only the agent asked for');
  assert.match(md, /prompt of a with \[redacted:API_TOKEN\]/);
  assert.match(md, /````text\nANSWER: 42 ```not a fence```\n````/, 'a fence longer than the reply\'s backticks');
  assert.match(md, /warming up/);
  assert.match(md, /failed · exit 3 · 1\.5 s · 10 in \/ 5 out tokens · \$0\.0123/);
  assert.match(md, /\*\*Reason:\*\* exited with code 3/);
  assert.match(renderTranscript('run_1', 'ghost', turns), /No turn of ghost is recorded/);
  assert.deepEqual(transcriptPath('run_1'), ['.agentcanvas', 'runs', 'run_1', 'turns.jsonl']);
});

test('runs tree: an agent opens its transcript when clicked', () => {
  const run = { runId: 'run_1', flow: 'f', status: 'completed', interactions: [], pending: [] };
  const node = { kind: 'agent' as const, run, agent: { id: 'a', status: 'completed' } };
  const it = runTreeItem(node as never);
  assert.equal(it.command?.command, 'agentcanvas.showTranscript');
  assert.deepEqual(it.command?.arguments, [node]);
});

test('Show Transcript with the canvas overlay\'s argument ({ runId, agent }) opens that agent\'s turns of that run', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ac-transcript-'));
  try {
    mkdirSync(path.join(dir, '.agentcanvas', 'runs', 'run_7'), { recursive: true });
    writeFileSync(path.join(dir, '.agentcanvas', 'runs', 'run_7', 'turns.jsonl'), [turn(1, 'coder'), turn(2, 'tester'), turn(3, 'coder', { reply: 'LAST REPLY' })].join('\n') + '\n');
    workspace.workspaceFolders = [{ uri: Uri.file(dir), name: 'ws' }];
    const rc = new RunController({} as never, new Log({ info() {}, warn() {}, error() {}, appendLine() {} } as never), {} as never, {} as never, {} as never);
    rc.register();
    const show = mock.registered.get('agentcanvas.showTranscript');
    assert.ok(show, 'the command is registered');
    // what the canvas's provider runs for { type: "showTranscript", runId: "run_7", agentId: "coder" }
    await show({ runId: 'run_7', agent: 'coder' });
    assert.equal(mock.shownDocs.length, 1);
    const { uri, text } = mock.shownDocs[0];
    assert.equal(uri, 'agentcanvas-transcript:///run_7/coder.md');
    assert.match(text, /^# coder — run run_7\n/);
    assert.match(text, /## Turn 1 /);
    assert.match(text, /## Turn 3 [^]*LAST REPLY/, 'its last turn is in it');
    assert.doesNotMatch(text, /## Turn 2 /, 'not another agent\'s');
    // without both ids nothing opens: the person is told how to pick one
    await show({ runId: 'run_7' });
    assert.equal(mock.shownDocs.length, 1);
    assert.match(mock.messages.at(-1)?.message ?? '', /pick an agent of a run/);
  } finally {
    workspace.workspaceFolders = undefined;
    mock.reset();
    rmSync(dir, { recursive: true, force: true });
  }
});
