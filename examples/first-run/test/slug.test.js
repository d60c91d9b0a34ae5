const test = require('node:test');
const assert = require('node:assert/strict');
const { slugify } = require('../src/slug');

test('lower case, words joined by single dashes', () => {
  assert.equal(slugify('Hello World'), 'hello-world');
  assert.equal(slugify('  Many   spaces  here '), 'many-spaces-here');
});

test('punctuation is dropped', () => {
  assert.equal(slugify('Hello, World!'), 'hello-world');
  assert.equal(slugify("What's new in 2.0?"), 'whats-new-in-2-0');
});
