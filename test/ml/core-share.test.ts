import { describe, expect, it } from 'vitest';
import { workerBlasThreads } from '../../src/ml/core-share.js';

describe('workerBlasThreads', () => {
  it('gives each worker its share of the cores for the native kernels, never oversubscribing', () => {
    expect(workerBlasThreads(16, 16)).toBe(1);
    expect(workerBlasThreads(4, 16)).toBe(4);
    expect(workerBlasThreads(3, 16)).toBe(5);
    expect(workerBlasThreads(3, 2)).toBe(1);
    expect(workerBlasThreads(1, 2)).toBe(2);
    for (let cores = 1; cores <= 64; cores++)
      for (let w = 1; w <= cores; w++) expect(w * workerBlasThreads(w, cores)).toBeLessThanOrEqual(cores);
  });
});
