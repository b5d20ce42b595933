/**
 * Chromium screenshots of fedscore's reports, to look at what a reader sees first: each
 * `report.html` given is opened in headless Chromium (Debian's `chromium`, or FEDSCORE_CHROMIUM,
 * driven by playwright-core, as test/server/dashboard.test.ts does) at 1280×800 and saved twice —
 * the first screen (`<name>-fold.png`: the leaderboard must be on it) and the whole page
 * (`<name>-full.png`), and each chart (`<name>-<chart id>.png`). It prints where the leaderboard's table ends, and fails when it ends below
 * the fold.
 *
 *   npx tsx scripts/screenshots.ts --out <dir> <name>=<report.html> …
 *
 * The dashboard's screenshots come from its Chromium test while rounds run through it:
 * `FEDSCORE_SHOTS=<dir> npx vitest run test/server/dashboard.test.ts -t 'follows a running round'`
 * (scripts/screenshots.sh runs both).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const CHROMIUM = process.env.FEDSCORE_CHROMIUM ?? '/usr/bin/chromium';
const VIEWPORT = { width: 1280, height: 800 };

function parseArgs(argv: readonly string[]): { out: string; pages: [string, string][] } {
  let out: string | undefined;
  const pages: [string, string][] = [];
  for (let k = 0; k < argv.length; k++) {
    const a = argv[k]!;
    if (a === '--out') out = argv[++k];
    else if (/^[\w.-]+=/.test(a)) {
      const at = a.indexOf('=');
      pages.push([a.slice(0, at), a.slice(at + 1)]);
    } else throw new Error(`${a}: expected --out <dir> or <name>=<report.html>`);
  }
  if (!out) throw new Error('--out: the folder for the PNG files is missing');
  if (pages.length === 0) throw new Error('expected at least one <name>=<report.html>');
  return { out, pages };
}

async function main(): Promise<void> {
  const { out, pages } = parseArgs(process.argv.slice(2));
  mkdirSync(out, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  let below = 0;
  try {
    const page = await browser.newPage({ viewport: VIEWPORT });
    for (const [name, file] of pages) {
      await page.goto(pathToFileURL(resolve(file)).href);
      const fold = join(out, `${name}-fold.png`);
      const full = join(out, `${name}-full.png`);
      await page.screenshot({ path: fold });
      await page.screenshot({ path: full, fullPage: true });
      const box = await page.locator('#leaderboard table').boundingBox();
      // Each chart on its own (figures have the chart's id), to look at closely.
      for (const id of await page.locator('figure[id]').evaluateAll((fs) => fs.map((f) => f.id)))
        await page.locator(`figure[id="${id}"]`).screenshot({ path: join(out, `${name}-${id}.png`) });
      const end = box ? Math.round(box.y + box.height) : null;
      const ok = end !== null && end <= VIEWPORT.height;
      if (!ok) below++;
      console.log(
        `${name}: ${fold}, ${full}; leaderboard table ${end === null ? 'missing' : `ends at y = ${end} px`} (${ok ? 'above' : 'NOT above'} the ${VIEWPORT.height} px fold)`,
      );
    }
  } finally {
    await browser.close();
  }
  if (below > 0) process.exitCode = 1;
}

await main();
