/**
 * TensorFlow.js as fedscore uses it: every module of src/ml imports tf from here, never from
 * '@tensorflow/tfjs' directly, so that `PROD` is set before the first tensor exists. Without it
 * the cpu backend's first write prints tfjs's "Hi, looks like you are running TensorFlow.js in
 * Node.js" banner on stderr (`fedscore init` printed it), and tfjs runs its debug-mode checks.
 * test/arch/layers.test.ts keeps other modules from importing tfjs directly.
 */
import * as tf from '@tensorflow/tfjs';

tf.env().set('PROD', true);

export * from '@tensorflow/tfjs';
