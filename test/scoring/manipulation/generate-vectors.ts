/**
 * Rewrites test/vectors/manipulation/pre-split.json from the current code — only after a
 * deliberate change of the numbers:
 *   npx tsx test/scoring/manipulation/generate-vectors.ts > test/vectors/manipulation/pre-split.json
 * The committed file was recorded from the single-file
 * scoring/manipulation.ts of commit 090c416, before it was split and made to call scoring/private.ts.
 */
import { currentApi, encodeNonFinite, recordVectors } from './_vectors.js';

process.stdout.write(`${JSON.stringify(recordVectors(currentApi), encodeNonFinite)}\n`);
