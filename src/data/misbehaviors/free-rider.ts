/** Free rider: the silo sends M0 back, so Δ = 0 (papers/000 §5: "send the same model back"). */
import type { UpdateMisbehaviorDefinition } from './definition.js';

export const freeRider: UpdateMisbehaviorDefinition = {
  name: 'free-rider',
  description: 'Δ = 0',
  side: 'update',
  apply: (honest) => new Float32Array(honest.length),
};
