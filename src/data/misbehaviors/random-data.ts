/** Random data: the silo's examples replaced by uniform noise with random labels (papers/000 §5 (ii)). */
import { randomData as noiseData } from '../misbehavior.js';
import type { DataMisbehaviorDefinition } from './definition.js';

export const randomData: DataMisbehaviorDefinition = {
  name: 'random-data',
  description: 'noise images with random labels',
  side: 'data',
  apply: (ds, m) => noiseData(ds.n, ds.shape, ds.numClasses, m.seed, `${ds.name}+random-data`),
};
