/** src/schema/json-depth.ts: the nesting depth of JSON text, without recursion. */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/schema/canonical-json.js';
import {
  JsonDepthError,
  jsonTextDepth,
  MAX_JSON_DEPTH,
  parseBoundedJson,
} from '../../src/schema/json-depth.js';

describe('jsonTextDepth', () => {
  it('counts arrays and objects, not brackets inside strings or after escapes', () => {
    expect(jsonTextDepth('1')).toBe(0);
    expect(jsonTextDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonTextDepth('["[[[{{{", "\\"[[["]')).toBe(1);
    expect(jsonTextDepth('[[],[[]],[]]')).toBe(3);
  });

  it('stops scanning once past the limit', () => {
    expect(jsonTextDepth('['.repeat(1_000_000), 64)).toBe(65);
  });
});

describe('parseBoundedJson and canonicalJson', () => {
  it('parses up to the limit and refuses one level more, naming the source', () => {
    const at = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;
    expect(() => parseBoundedJson(at(MAX_JSON_DEPTH), 'f.json')).not.toThrow();
    expect(() => parseBoundedJson(at(MAX_JSON_DEPTH + 1), 'f.json')).toThrow(
      new JsonDepthError('f.json', MAX_JSON_DEPTH),
    );
    expect(() => parseBoundedJson('{"a":', 'f.json')).toThrow(/^f\.json: not JSON/);
  });

  it('canonicalJson refuses a value nested deeper than the limit instead of exhausting the stack', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(() => canonicalJson(deep)).toThrow(JsonDepthError);
    expect(canonicalJson({ b: [1, { d: 2, c: 3 }], a: null })).toBe('{"a":null,"b":[1,{"c":3,"d":2}]}');
  });
});
