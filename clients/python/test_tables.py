"""The tables `fedscore-client scores` prints (issue 37): "–" for a silo with no score yet (the
service sums 0 there), and a silo the strategy did not select marked "(not selected)".

    python3 test_tables.py
"""

import unittest

from fedscore_client_cli import cumulative_table, round_table

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
        self.assertEqual(rows, [["0", "0.1000", "0.3000"], ["1", "–", "–"], ["2", "0.0500", "0.2000"]])

    def test_a_silo_scored_zero_shows_zero(self):
        r = {**ROUND, "schemes": {"loo": [0.0, None, 0.05], "ee": [0.3, None, 0.2]}}
        c = {"consortium": "c1", "rounds": [r], "cumulative": {"loo": [0.0, 0.0, 0.05], "ee": [0.3, 0.0, 0.2]}}
        self.assertEqual(cumulative_table(c).splitlines()[2].split(), ["0", "0.0000", "0.3000"])

    def test_a_silo_not_selected_is_marked_in_the_round(self):
        lines = round_table(ROUND).splitlines()
        self.assertEqual(lines[3].split(), ["1", "(not", "selected)", "–", "–", "–", "–"])
        self.assertEqual(lines[2].split()[0], "0")
        every = round_table({**ROUND, "selected": None}).splitlines()
        self.assertEqual(every[3].split()[0:2], ["1", "–"])


if __name__ == "__main__":
    unittest.main()
