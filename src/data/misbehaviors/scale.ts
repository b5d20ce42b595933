/** Scaling: Δ multiplied by `factor` (model-replacement style boosting; −1 by default, a sign flip). */
import { checkNumber } from '../check.js';
import type { UpdateMisbehaviorDefinition } from './definition.js';

/** factor · update, as a new array. Throws RangeError when factor is not finite. */
function scaleUpdate(update: Float32Array, factor: number): Float32Array {
  checkNumber('factor', factor, -Number.MAX_VALUE, Number.MAX_VALUE);
  const out = new Float32Array(update.length);
  for (let i = 0; i < out.length; i++) out[i] = factor * update[i]!;
  return out;
}

export const scale: UpdateMisbehaviorDefinition = {
  name: 'scale',
  description: 'Δ multiplied by `factor`',
  factor: 'the update scaling factor; default −1',
  checkFactor: (f) => void checkNumber('factor', f, -Number.MAX_VALUE, Number.MAX_VALUE),
  side: 'update',
  apply: (honest, m) => scaleUpdate(honest, m.factor ?? -1),
};
