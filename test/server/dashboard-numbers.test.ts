/**
 * The dashboard's numbers (issue 37): the page's own `fmt` (src/server/_dashboard-page.ts, taken
 * from the page it serves) prints a value within rounding noise of 0 — 2.78e-17, a sum of
 * differences — as 0, four significant digits otherwise, an exponent only for real extremes.
 */
import { describe, expect, it } from 'vitest';
import { dashboardPage } from '../../src/server/_dashboard-page.js';

/** The page's `fmt`, compiled from the script the page carries. */
function pageFmt(): (x: number | null | undefined) => string {
  const page = dashboardPage('c1');
  const source = /function fmt\(x\) \{[\s\S]*?\n {2}\}/.exec(page);
  expect(source, 'the page defines fmt').not.toBeNull();
  return new Function(`${source![0]}; return fmt;`)() as (x: number | null | undefined) => string;
}

describe("the dashboard's number format", () => {
  it('tiny values are 0, others four significant digits, extremes as exponents, no value a dash', () => {
    const fmt = pageFmt();
    expect(fmt(2.78e-17)).toBe('0');
    expect(fmt(-3.1e-16)).toBe('0');
    expect(fmt(0)).toBe('0');
    expect(fmt(0.123456)).toBe('0.1235');
    expect(fmt(-0.0421)).toBe('-0.0421');
    expect(fmt(2.5e-4)).toBe('2.50e-4');
    expect(fmt(123456)).toBe('1.23e+5');
    expect(fmt(null)).toBe('–');
    expect(fmt(undefined)).toBe('–');
  });
});
