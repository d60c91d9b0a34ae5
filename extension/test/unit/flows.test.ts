import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyFlowYaml, isFlowPath, validateFlowName } from '../../src/flows';

test('flow files are .agentcanvas/flows/*.yaml and flows/*.yaml, nothing deeper', () => {
  assert.equal(isFlowPath('/ws/.agentcanvas/flows/team.yaml'), true);
  assert.equal(isFlowPath('/ws/flows/team.yaml'), true);
  assert.equal(isFlowPath('C:\\ws\\flows\\team.yaml'), true);
  assert.equal(isFlowPath('/ws/flows/sub/team.yaml'), false);
  assert.equal(isFlowPath('/ws/flows/team.yml'), false);
  assert.equal(isFlowPath('/ws/myflows/team.yaml'), false);
});

test('flow names become file names', () => {
  assert.equal(validateFlowName('team-alpha_2'), undefined);
  assert.match(validateFlowName('') ?? '', /name/);
  assert.match(validateFlowName('../evil') ?? '', /letters/);
  assert.match(validateFlowName('a b') ?? '', /letters/);
  assert.match(validateFlowName('x'.repeat(81)) ?? '', /80/);
});

test('an empty flow has the sections of the flow format (docs/flow-format.md)', () => {
  assert.equal(emptyFlowYaml('demo'), 'version: 0.2\nname: demo\n\nagents: []\n\ninteractions: []\n\nlayout:\n  nodes: {}\n  edges: {}\n');
});

test('Open Canvas shows a flow in one tab: the open canvas comes to the front, a text editor of it gives way to the canvas', async () => {
  const { openCanvas, CANVAS_VIEW_TYPE } = await import('../../src/commands/flowCommands');
  const { mock, window, TabInputCustom, TabInputText, Uri } = await import('./vscode-mock');
  const flow = Uri.file('/ws/flows/team.yaml');
  const other = Uri.file('/ws/flows/other.yaml');
  mock.reset();
  // nothing open: the canvas opens in the active group
  await openCanvas(flow as never);
  assert.deepEqual(mock.commands, [{ command: 'vscode.openWith', args: [flow, CANVAS_VIEW_TYPE, undefined] }]);
  // its canvas is open in the second group: that tab comes to the front, no second canvas
  mock.reset();
  const canvasTab = { input: new TabInputCustom(flow, CANVAS_VIEW_TYPE) };
  window.tabGroups.all = [{ viewColumn: 1, tabs: [{ input: new TabInputText(flow) }] }, { viewColumn: 2, tabs: [{ input: new TabInputCustom(other, CANVAS_VIEW_TYPE) }, canvasTab] }];
  await openCanvas(flow as never);
  assert.deepEqual(mock.commands, [{ command: 'vscode.openWith', args: [flow, CANVAS_VIEW_TYPE, { viewColumn: 2, preserveFocus: false }] }]);
  assert.deepEqual(window.tabGroups.closed, []);
  // only its YAML is open: the canvas takes that tab's place, the text tab closes
  mock.reset();
  const textTab = { input: new TabInputText(flow), isDirty: false };
  window.tabGroups.all = [{ viewColumn: 1, tabs: [{ input: new TabInputText(other) }] }, { viewColumn: 3, tabs: [textTab] }];
  await openCanvas(flow as never);
  assert.deepEqual(mock.commands, [{ command: 'vscode.openWith', args: [flow, CANVAS_VIEW_TYPE, { viewColumn: 3, preserveFocus: false }] }]);
  assert.deepEqual(window.tabGroups.closed, [textTab]);
  // with unsaved changes the text tab stays (closing it would ask to save; the canvas shows them too)
  mock.reset();
  const dirty = { input: new TabInputText(flow), isDirty: true };
  window.tabGroups.all = [{ viewColumn: 1, tabs: [dirty] }];
  await openCanvas(flow as never);
  assert.deepEqual(window.tabGroups.closed, []);
});
