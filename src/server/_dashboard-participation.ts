/**
 * How the dashboard words who took part in a round: browser code in a string, like the page's
 * script (./_dashboard-page.ts embeds it there; test/server/dashboard-participation.test.ts runs
 * it with node:vm). It contains no backtick and no "${".
 *
 * A round's own silos are those the strategy selected (every silo without a selection). Each
 * closed stage counts its set U_k out of them, so a silo the strategy left out never reads as a
 * dropout — a round of 2 selected among 3 shows `advertise 2/2` and `selected 2 of 3: 0, 2` — while
 * a silo that stopped answering does: `mask 2/3`, survivors `2/3`.
 */
export const PARTICIPATION_SCRIPT = `
  /** Who took part in round r of a consortium of n silos: the stage counts, survivors, selection. */
  function participation(r, n) {
    var chosen = r.selected ? r.selected.length : n;
    return {
      stages: r.sets.map(function (set) { return set.length + '/' + chosen; }),
      survivors: r.survivors ? r.survivors.length + '/' + chosen : '–',
      selected: r.selected ? 'selected ' + chosen + ' of ' + n + ': ' + r.selected.join(', ') : 'all'
    };
  }
`;
