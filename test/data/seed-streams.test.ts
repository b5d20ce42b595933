/**
 * The one table of seed streams (src/data/seed.ts, SEED_STREAMS): unique within each kind, the
 * round streams apart from every silo's training stream, and apart from the estimators' streams.
 */
import { describe, expect, it } from 'vitest';
import { MAX_SILO_STREAMS, SEED_STREAMS } from '../../src/data/seed.js';
import { estimatorDefinitions } from '../../src/estimators/registry.js';
import { ExperimentConfigSchema } from '../../src/records/config-schema.js';

const values = (o: Record<string, number>) => Object.values(o);

describe('SEED_STREAMS', () => {
  it('has no stream twice within a kind', () => {
    for (const kind of Object.values(SEED_STREAMS))
      expect(new Set(values(kind)).size).toBe(values(kind).length);
  });

  it("keeps every round stream above the silos' training streams [s], s < the largest consortium", () => {
    const silos = (ExperimentConfigSchema.properties as Record<string, { maximum?: number }>).silos;
    expect(silos?.maximum).toBe(MAX_SILO_STREAMS);
    for (const s of values(SEED_STREAMS.round)) expect(s).toBeGreaterThanOrEqual(MAX_SILO_STREAMS);
  });

  it("gives no estimator a round stream; the one-part estimator streams are the frozen Maverick's [7] only", () => {
    const round = new Set(values(SEED_STREAMS.round));
    const onePart: string[] = [];
    for (const e of estimatorDefinitions()) {
      if (e.stream.length === 1) {
        onePart.push(e.name);
        expect(round.has(e.stream[0] as number)).toBe(false);
      }
    }
    // Maverick's stream [7] predates the table and equals silo 7's training stream; it is kept
    // because changing it would change every published Maverick result (a documented overlap).
    expect(onePart).toEqual(['maverick']);
  });

  it('keeps its historical values (results stay reproducible)', () => {
    expect(SEED_STREAMS).toEqual({
      run: {
        syntheticData: 1,
        syntheticMeans: 2,
        partition: 3,
        testSplit: 4,
        labelNoise: 5,
        attack: 6,
        longTail: 7,
        paper003Split: 8,
        identities: 0x1d,
        initialModel: 0x1417,
      },
      round: { selection: 0x5e1, weights: 0xa66, references: 0x7e5 },
      sub: {
        mixedNonIid: 0x4d1,
        paper003Data: 0x3d0,
        paper003First: 0x3d1,
        paper003Second: 0x3d2,
        paper003Test: 0x3d3,
        paper003Local: 0x3d4,
      },
    });
  });
});
