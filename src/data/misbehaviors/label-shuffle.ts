/** Label shuffling: a fixed derangement of the classes, drawn once from the seed (papers/002 §5). */
import { labelShuffleMap, mapLabels } from '../misbehavior.js';
import type { DataMisbehaviorDefinition } from './definition.js';

export const labelShuffle: DataMisbehaviorDefinition = {
  name: 'label-shuffle',
  description: 'a fixed permutation of the classes',
  side: 'data',
  apply: (ds, m) => ({
    ...ds,
    y: mapLabels(ds.y, labelShuffleMap(ds.numClasses, m.seed), ds.numClasses),
    name: `${ds.name}+label-shuffle`,
  }),
};
