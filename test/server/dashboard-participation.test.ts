/**
 * The dashboard's wording of who took part in a round (src/server/_dashboard-participation.ts),
 * run as the browser runs it: the script string evaluated in a fresh context. A round where the
 * strategy selected a subset and a round where a silo dropped out must read differently.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { dashboardPage } from '../../src/server/_dashboard-page.js';
import { PARTICIPATION_SCRIPT } from '../../src/server/_dashboard-participation.js';

interface RoundView {
  sets: number[][];
  survivors: number[] | null;
  selected: number[] | null;
}
type Participation = (r: RoundView, n: number) => { stages: string[]; survivors: string; selected: string };

const participation = runInNewContext(`${PARTICIPATION_SCRIPT}; participation`) as Participation;

describe('the dashboard: selected or dropped out', () => {
  test('the strategy selects 2 of 3 and both go on: every stage is complete, the selection is named', () => {
    const selected = [0, 2];
    expect(
      participation(
        { sets: [selected, selected, selected, selected, selected], survivors: selected, selected },
        3,
      ),
    ).toEqual({
      stages: ['2/2', '2/2', '2/2', '2/2', '2/2'],
      survivors: '2/2',
      selected: 'selected 2 of 3: 0, 2',
    });
  });

  test('every silo takes part and silo 2 drops out at the masked input: the stage counts say so', () => {
    expect(
      participation(
        {
          sets: [
            [0, 1, 2],
            [0, 1, 2],
            [0, 1],
            [0, 1],
            [0, 1],
          ],
          survivors: [0, 1],
          selected: null,
        },
        3,
      ),
    ).toEqual({ stages: ['3/3', '3/3', '2/3', '2/3', '2/3'], survivors: '2/3', selected: 'all' });
  });

  test('a selection and a dropout together: counted out of the selected silos', () => {
    expect(
      participation(
        {
          sets: [
            [0, 2, 3],
            [0, 3],
          ],
          survivors: null,
          selected: [0, 2, 3],
        },
        5,
      ),
    ).toEqual({
      stages: ['3/3', '2/3'],
      survivors: '–',
      selected: 'selected 3 of 5: 0, 2, 3',
    });
  });

  test('the page carries the function and uses it for the stage chips, survivors and selection', () => {
    const page = dashboardPage('c1');
    expect(page).toContain(PARTICIPATION_SCRIPT);
    expect(page).toContain("label += ' ' + who.stages[k];");
    expect(page).toContain("el('td', { class: 'survivors' }, participation(r, n).survivors)");
    expect(page).toContain("el('td', { class: 'selected' }, participation(r, n).selected)");
  });
});
