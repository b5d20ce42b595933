/**
 * fast-check runs with a fixed seed so a CI run is reproducible; set FC_SEED to another integer,
 * or to `random`, to explore further (a failure prints the seed and path to replay it).
 */
import fc from 'fast-check';

const raw = process.env.FC_SEED ?? '20261122';
if (raw !== 'random') {
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new RangeError(`FC_SEED: expected an integer or 'random', got '${raw}'`);
  fc.configureGlobal({ seed });
}
