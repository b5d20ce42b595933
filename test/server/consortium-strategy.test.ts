/**
 * A consortium's strategy, seed and schedule at creation: a strategy that cannot run under secure
 * aggregation is refused with the reason, and so are a round size below t, a seed without a
 * strategy, an unknown strategy or parameter, and a schedule of 0 rounds; the settings are stored.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { adminInject, consortiumBody, type Harness, harness } from './_harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function create(extra: Record<string, unknown>) {
  h ??= await harness({ app: { scheduleIntervalMs: false } });
  const r = await adminInject(h, 'POST', '/v1/consortia', { ...consortiumBody(h.keys), ...extra });
  return {
    status: r.statusCode,
    body: r.json() as { code?: string; message?: string } & Record<string, unknown>,
  };
}

describe('a consortium with a strategy', () => {
  it('stores the strategy, the seed and the schedule', async () => {
    const r = await create({
      strategy: { name: 'score-weighted', parameters: { score: 'ee' } },
      seed: 9,
      rounds: 4,
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      strategy: { name: 'score-weighted', parameters: { score: 'ee' } },
      seed: 9,
      rounds: 4,
    });
  });

  it('refuses a strategy that needs individual updates, saying why', async () => {
    const r = await create({ strategy: { name: 'fedms' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('FEDSCORE_ERR_INVALID_CONSORTIUM');
    expect(r.body.message).toMatch(
      /^the consortium configuration is invalid: strategy\.name: 'fedms' cannot run networked: it values silos by Maverick-Shapley .* individual update$/,
    );
  });

  it('refuses a round size below the threshold, a seed without a strategy, a bad name or parameter, 0 rounds', async () => {
    const small = await create({ strategy: { name: 'fedavg', parameters: { clientsPerRound: 2 } } });
    expect(small.body.message).toBe(
      'the consortium configuration is invalid: strategy: selects 2 of the 4 silos per round, below the threshold t = 3: no round could complete',
    );
    expect((await create({ seed: 3 })).body.message).toBe(
      'the consortium configuration is invalid: seed: applies only with a strategy',
    );
    expect((await create({ strategy: { name: 'fedsgd' } })).body.message).toMatch(
      /invalid: strategy\.name: unknown strategy 'fedsgd'/,
    );
    expect(
      (await create({ strategy: { name: 'fedavg', parameters: { fraction: 2 } } })).body.message,
    ).toMatch(/invalid: strategy\.fraction: expected a number in \(0, 1\], got 2/);
    expect(
      (await create({ strategy: { name: 'score-weighted', parameters: { score: 'mrsv' } } })).body.message,
    ).toMatch(/invalid: strategy\.score: a networked run publishes only the private scores/);
    const zero = await create({ rounds: 0 });
    expect(zero.status).toBe(400);
    expect(zero.body.code).toBe('FEDSCORE_ERR_VALIDATION');
  });
});
