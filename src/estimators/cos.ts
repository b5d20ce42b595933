/**
 * COS: cosine similarity of each update with the aggregate (papers/003 §5.1, papers/002 CGSV);
 * no coalition evaluations. Its scores accumulate over rounds.
 */
import { cosineScores } from '../../scoring/cosine.js';
import { options } from './_schema.js';
import { defineEstimator } from './estimator.js';

export const cos = defineEstimator({
  name: 'cos',
  family: 'cosine',
  title: 'cosine similarity of each update with the aggregate (papers/003 §5.1)',
  schema: options({}),
  // Historical value, frozen for reproducibility: the stream the harness once derived from the
  // name (length 3, 'c' = 99). COS draws no random numbers; the stream stays reserved.
  stream: [3, 99],
  compare: 'cumulative',
  byDefault: true,
  run: async ({ updates, aggregate }) => ({ values: cosineScores(updates, aggregate) }),
});
