import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TextPositions, lastRunSpend, toCanvasLoadResult } from '../../src/canvasBackend';

test('LSP positions become 1-based code-point columns and byte offsets', () => {
  const text = 'name: "é😀x"\nagents: []\n';
  const p = new TextPositions(text);
  assert.deepEqual(p.toSrcPos({ line: 0, character: 0 }), { line: 1, column: 1, offset: 0 });
  // after `name: "é😀` : 7 ASCII, é (1 UTF-16 unit, 2 bytes), 😀 (2 units, 4 bytes)
  assert.deepEqual(p.toSrcPos({ line: 0, character: 10 }), { line: 1, column: 10, offset: 13 });
  assert.deepEqual(p.toSrcPos({ line: 1, character: 6 }), { line: 2, column: 7, offset: Buffer.byteLength('name: "é😀x"\n') + 6 });
  assert.deepEqual(p.toSrcPos({ line: 1, character: 999 }), { line: 2, column: 11, offset: Buffer.byteLength('name: "é😀x"\nagents: []') }, 'clamped to the line');
});

test("loadFlow's answer in the canvas's shape", () => {
  const text = 'version: 0.2\nagents:\n  - id: w\n    files: nope\n';
  const r = toCanvasLoadResult(
    {
      uri: 'file:///ws/flows/a.yaml',
      flow: { version: '0.2', agents: [{ id: 'w' }] },
      spans: { '/agents/0': { start: { line: 2, character: 4 }, end: { line: 3, character: 15 } } },
      diagnostics: [{ range: { start: { line: 3, character: 11 }, end: { line: 3, character: 15 } }, severity: 1, code: 'schema', message: 'files must be a list', data: { path: '/agents/0/files' } }],
    },
    text,
    '/ws/flows/a.yaml',
  );
  assert.deepEqual(r.flow?.spans?.['/agents/0'].start, { line: 3, column: 5, offset: 25 });
  assert.deepEqual(r.diagnostics, [
    { file: '/ws/flows/a.yaml', range: { start: { line: 4, column: 12, offset: 42 }, end: { line: 4, column: 16, offset: 46 } }, severity: 'error', code: 'schema', message: 'files must be a list', path: '/agents/0/files' },
  ]);
  assert.equal(toCanvasLoadResult({ flow: null, diagnostics: [] }, '', 'f').flow, null);
});

test("lastRunSpend: the newest run of the flow (listRuns is newest first), each agent's checkpointed total", () => {
  const runs = [
    { runId: 'r3', flow: 'other', agentSpend: { x: { tokens: 9, costUsd: 0, costKnown: true, reports: 1 } } },
    { runId: 'r2', flow: 'team', agentSpend: { coder: { tokens: 1500, costUsd: 0.03, costKnown: true, metered: true, reports: 2 }, odd: { tokens: 5 } } },
    { runId: 'r1', flow: 'team', agentSpend: { coder: { tokens: 1, costUsd: 0, costKnown: true, reports: 1 } } },
  ];
  assert.deepEqual(lastRunSpend(runs, 'team'), {
    runId: 'r2',
    agents: { coder: { tokens: 1500, costUsd: 0.03, costKnown: true, unreported: false, metered: true, reports: 2 } },
  }, 'a total without its report count is not one the sidecar wrote');
  assert.deepEqual(lastRunSpend({ runs: [{ runId: 'r0', flow: 'team' }] }, 'team'), { runId: 'r0', agents: {} }, 'a run before any spend');
  assert.equal(lastRunSpend([], 'team'), undefined);
});
