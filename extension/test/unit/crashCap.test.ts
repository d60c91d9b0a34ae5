import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CrashCap } from '../../src/crashCap';

test('five crashes inside three minutes stop the restarts', () => {
  let now = 0;
  const cap = new CrashCap(5, 180_000, () => now);
  const allowed: boolean[] = [];
  for (let i = 0; i < 5; i++) {
    allowed.push(cap.recordCrash());
    now += 10_000;
  }
  assert.deepEqual(allowed, [true, true, true, true, false]);
});

test('crashes older than the window are forgotten', () => {
  let now = 0;
  const cap = new CrashCap(3, 60_000, () => now);
  assert.equal(cap.recordCrash(), true);
  assert.equal(cap.recordCrash(), true);
  now = 61_000;
  assert.equal(cap.recordCrash(), true, 'the first two are outside the window');
  assert.equal(cap.recent, 1);
});

test('a manual restart resets the budget', () => {
  const cap = new CrashCap(2, 60_000, () => 0);
  cap.recordCrash();
  assert.equal(cap.recordCrash(), false);
  cap.reset();
  assert.equal(cap.recordCrash(), true);
});
