/** Label flipping: label c becomes K − 1 − c (papers/000 §5 (i), papers/003's Byzantine client). */
import { flipMap, mapLabels } from '../misbehavior.js';
import type { DataMisbehaviorDefinition } from './definition.js';

export const labelFlip: DataMisbehaviorDefinition = {
  name: 'label-flip',
  description: 'label c becomes K − 1 − c',
  side: 'data',
  apply: (ds) => ({
    ...ds,
    y: mapLabels(ds.y, flipMap(ds.numClasses), ds.numClasses),
    name: `${ds.name}+label-flip`,
  }),
};
