/** src/client/answers.ts: each endpoint's cap, and bodies read under it. */
import { describe, expect, it } from 'vitest';
import {
  AnswerRefusedError,
  answerCap,
  DEFAULT_ANSWER_LIMITS as L,
  parseAnswerJson,
  readCapped,
} from '../../src/client/answers.js';

describe('answerCap', () => {
  it('a model is 4·d bytes, the sum 8·d, inbox messages and JSON their caps', () => {
    const c = '/v1/consortia/c1';
    expect(answerCap(`${c}/models/3`, L, 1000)).toBe(4000);
    expect(answerCap(`${c}/rounds/2/aggregate/sum`, L, 1000)).toBe(8000);
    expect(answerCap(`${c}/models/3`, L, undefined)).toBe(L.maxVectorBytes);
    expect(answerCap(`${c}/rounds/2/inbox/shares`, L, 1000)).toBe(L.maxMessageBytes);
    for (const p of [c, `${c}/rounds/2`, `${c}/rounds/2/aggregate`, `${c}/scores?x=1`])
      expect(answerCap(p, L, 1000)).toBe(L.maxJsonBytes);
  });
});

describe('readCapped', () => {
  const never = () => {};
  it('reads a body up to the cap and refuses one byte more, declared or streamed', async () => {
    expect((await readCapped(new Response(new Uint8Array(10)), 10, 1000, 'GET /x', never)).length).toBe(10);
    await expect(readCapped(new Response(new Uint8Array(11)), 10, 1000, 'GET /x', never)).rejects.toThrow(
      AnswerRefusedError,
    );
    const declared = new Response(new Uint8Array(5), { headers: { 'content-length': '99' } });
    await expect(readCapped(declared, 10, 1000, 'GET /x', never)).rejects.toThrow(
      'GET /x: answer refused (FEDSCORE_CLIENT_ANSWER_TOO_LARGE): HTTP 200 body of 99 bytes, above the 10 bytes this endpoint can hold',
    );
    expect((await readCapped(new Response(null, { status: 204 }), 10, 1000, 'GET /x', never)).length).toBe(0);
  });
});

describe('parseAnswerJson', () => {
  it('parses JSON; deep or malformed JSON is an AnswerRefusedError with its code', () => {
    const enc = (t: string) => new TextEncoder().encode(t);
    expect(parseAnswerJson(enc('{"a":[1]}'), 'GET /x')).toEqual({ a: [1] });
    const deep = () => parseAnswerJson(enc('['.repeat(65)), 'GET /x');
    expect(deep).toThrow('GET /x: answer refused (FEDSCORE_CLIENT_JSON_TOO_DEEP)');
    expect(() => parseAnswerJson(enc('{'), 'GET /x')).toThrow(
      'GET /x: answer refused (FEDSCORE_CLIENT_MALFORMED_JSON): not JSON',
    );
  });
});
