/** Set-up shared by the attack tests: a consortium of the test harness with a round in `reporting`. */
import {
  adminInject,
  consortiumBody,
  f32bytes,
  type Harness,
  INITIAL,
  Silo,
  STEPS,
} from '../server/_harness.js';

/**
 * Creates consortium `id` (the harness's body with `patch` applied; `utility: undefined` removes
 * the harness's utility declaration, i.e. the default, accuracy), uploads the initial model, opens
 * round 1 and drives all four silos through secure aggregation: the round is then in `reporting`.
 */
export async function roundInReporting(h: Harness, id = 'c1', patch: Record<string, unknown> = {}) {
  const body = JSON.parse(JSON.stringify({ ...consortiumBody(h.keys, id), ...patch }));
  const created = await adminInject(h, 'POST', '/v1/consortia', body);
  if (created.statusCode !== 201) throw new Error(`create: ${created.statusCode} ${created.body}`);
  const model = await adminInject(h, 'PUT', `/v1/consortia/${id}/model`, f32bytes(INITIAL));
  if (model.statusCode !== 204) throw new Error(`model: ${model.statusCode} ${model.body}`);
  const open = await adminInject(h, 'POST', `/v1/consortia/${id}/rounds`);
  if (open.statusCode !== 201) throw new Error(`open: ${open.statusCode} ${open.body}`);
  const silos = [0, 1, 2, 3].map((i) => new Silo(h, id, 1, i, 3));
  for (const s of silos) await s.start();
  for (const k of STEPS) for (const s of silos) await s.step(k);
  const round = await adminInject(h, 'GET', `/v1/consortia/${id}/rounds/1`);
  if (round.json().stage !== 'reporting') throw new Error(`round 1 is ${round.json().stage}`);
}
