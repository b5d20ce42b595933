"""The tables `fedscore-client scores` prints (issue 37): "–" for a silo with no score yet (the
service sums 0 there), a silo the strategy did not select marked "(not selected)", and the
headline with its 95 % interval, share and rank (fedscore_headline: the leaderboard's numbers from the
published rounds), a near-tie's rank printed as a range ("2–3").

    python3 test_tables.py
"""

import unittest

from fedscore_client_cli import cumulative_table, round_table
from fedscore_headline import headline_and_shares, leaderboard_numbers, rank_label, xoshiro128ss

# scoring/seeded-rng.ts: xoshiro128ss(0, 0x9e3779b9)'s first four words (the bootstrap's stream, seed 0)
XOSHIRO_FIRST_WORDS = [1292791899, 1284423797, 2013314966, 3703690653]

ROUND = {
    "round": 2,
    "silos": [0, 2],
    "utilities": {"full": 0.8, "empty": 0.5},
    "withOnly": [0.6, None, 0.7],
    "without": [0.7, None, 0.75],
    "schemes": {"loo": [0.1, None, 0.05], "ee": [0.3, None, 0.2]},
    "quarantined": [],
    "selected": [0, 2],
}


class Tables(unittest.TestCase):
    def test_a_silo_never_scored_shows_a_dash_not_zero(self):
        c = {"consortium": "c1", "rounds": [ROUND], "cumulative": {"loo": [0.1, 0.0, 0.05], "ee": [0.3, 0.0, 0.2]}}
        rows = [line.split() for line in cumulative_table(c).splitlines()[2:]]
        self.assertEqual(
            rows,
            [
                ["0", "0.1000", "0.3000", "0.1750", "[0.1750,", "0.1750]", "0.4667", "2"],
                ["1", "–", "–", "–", "–", "–", "–"],
                ["2", "0.0500", "0.2000", "0.2000", "[0.2000,", "0.2000]", "0.5333", "1"],
            ],
        )

    def test_a_silo_scored_zero_shows_zero(self):
        r = {**ROUND, "schemes": {"loo": [0.0, None, 0.05], "ee": [0.3, None, 0.2]}}
        c = {"consortium": "c1", "rounds": [r], "cumulative": {"loo": [0.0, 0.0, 0.05], "ee": [0.3, 0.0, 0.2]}}
        self.assertEqual(cumulative_table(c).splitlines()[2].split()[:3], ["0", "0.0000", "0.3000"])

    def test_a_silo_not_selected_is_marked_in_the_round(self):
        lines = round_table(ROUND).splitlines()
        self.assertEqual(lines[3].split(), ["1", "(not", "selected)", "–", "–", "–", "–"])
        self.assertEqual(lines[2].split()[0], "0")
        every = round_table({**ROUND, "selected": None}).splitlines()
        self.assertEqual(every[3].split()[0:2], ["1", "–"])

    def test_the_headline_and_share_by_hand(self):
        # ROUND, silos 0 and 2 (N = 2): β = v(M) − v(M0+U) = (0.2, 0.1), γ = v(M−U) − v(M0) =
        # (0.2, 0.25); base_0 = (β_2 + γ_2)/2 = 0.175, base_2 = (β_0 + γ_0)/2 = 0.2. α = (LOO + IOI)/2
        # = (0.1, 0.125): both above τ = 0.5 of the other's, so the gates are 1, and with one other
        # silo its deviation is 0 (no tie-break). Shares 0.175/0.375 and 0.2/0.375; silo 1 was never
        # selected: no share.
        headline, share = headline_and_shares([ROUND], 3)
        for got, want in zip(headline, [0.175, 0.0, 0.2]):
            self.assertAlmostEqual(got, want, places=12)
        self.assertIsNone(share[1])
        self.assertAlmostEqual(share[0], 0.175 / 0.375, places=12)
        self.assertAlmostEqual(share[2], 0.2 / 0.375, places=12)
        c = {"consortium": "c1", "rounds": [ROUND], "cumulative": {"loo": [0.1, 0.0, 0.05]}}
        self.assertEqual(
            cumulative_table(c).splitlines()[1].split(), ["silo", "loo", "headline", "95", "%", "interval", "share", "rank"]
        )

    def test_a_free_rider_gets_no_share(self):
        # silo 2 sends a zero update: v(M0 + 0) = v(M0), v(M − 0) = v(M), so α = 0 and the gate is shut
        r = {
            "round": 1,
            "silos": [0, 1, 2],
            "utilities": {"full": 0.8, "empty": 0.5},
            "withOnly": [0.65, 0.7, 0.5],
            "without": [0.72, 0.7, 0.8],
            "schemes": {},
            "quarantined": [],
        }
        headline, share = headline_and_shares([r], 3)
        self.assertEqual(headline[2], 0.0)
        self.assertEqual(share[2], 0.0)
        self.assertGreater(share[0], 0.0)
        self.assertGreater(share[1], 0.0)
        self.assertAlmostEqual(sum(share), 1.0)
        # under v(∅) = 0 the free rider's IOI is v(M0) > 0: it is paid (the convention matters)
        self.assertGreater(headline_and_shares([r], 3, "zero")[1][2], 0.0)

    def test_no_round_yet_gives_no_share(self):
        self.assertEqual(headline_and_shares([], 2), ([0.0, 0.0], [None, None]))
        board = leaderboard_numbers([], 2)
        self.assertEqual([e["interval"] for e in board], [[0.0, 0.0], [0.0, 0.0]])
        self.assertEqual([e["rankRange"] for e in board], [[1, 1], [1, 1]])

    def test_the_generator_is_scoring_random_ts(self):
        # xoshiro128**(seed 0, salt 0x9e3779b9): the first words of scoring/seeded-rng.ts `xoshiro128ss(0, 0x9e3779b9)`
        # (printed by node; test/clients/python-tables.test.ts checks the whole bootstrap against TypeScript)
        nxt = xoshiro128ss(0, 0x9E3779B9)
        self.assertEqual([nxt() for _ in range(4)], XOSHIRO_FIRST_WORDS)

    def test_a_near_tie_is_a_rank_range(self):
        # two silos that trade places from round to round: the bootstrap over rounds moves their ranks
        rounds = [
            {"round": 1, "silos": [0, 1, 2], "utilities": {"full": 0.8, "empty": 0.5},
             "withOnly": [0.7, 0.6, 0.55], "without": [0.6, 0.7, 0.75], "schemes": {}, "quarantined": []},
            {"round": 2, "silos": [0, 1, 2], "utilities": {"full": 0.8, "empty": 0.5},
             "withOnly": [0.6, 0.7, 0.55], "without": [0.7, 0.6, 0.75], "schemes": {}, "quarantined": []},
        ]
        board = leaderboard_numbers(rounds, 3)
        for e in board:
            self.assertLessEqual(e["interval"][0], e["headline"] + 1e-12)
            self.assertGreaterEqual(e["interval"][1], e["headline"] - 1e-12)
            self.assertLessEqual(e["rankRange"][0], e["rank"])
            self.assertGreaterEqual(e["rankRange"][1], e["rank"])
        self.assertEqual(rank_label([2, 3]), "2–3")
        self.assertEqual(rank_label([1, 1]), "1")
        self.assertNotEqual(board[0]["rankRange"][0], board[0]["rankRange"][1])
        c = {"consortium": "c1", "rounds": rounds, "cumulative": {"loo": [0.0, 0.0, 0.0]}}
        ranks = [line.split()[-1] for line in cumulative_table(c).splitlines()[2:]]
        self.assertIn("–", ranks[0])


if __name__ == "__main__":
    unittest.main()
