/**
 * The built-in misbehaviours (`attacks[].kind`), one line each: a new kind is its own file in this
 * folder and one line here. ./registry.ts collects every export of this file, in the order of the
 * kinds' names (test/arch/registries.test.ts checks that each line is `export { x } from './file.js'`
 * and names one kind).
 */
export { freeRider } from './free-rider.js';
export { labelFlip } from './label-flip.js';
export { labelShuffle } from './label-shuffle.js';
export { randomData } from './random-data.js';
export { randomUpdateAttack } from './random-update.js';
export { scale } from './scale.js';
