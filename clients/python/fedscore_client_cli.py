"""The ``fedscore-client`` command: keys, signed reports and scores of a silo (docs/python-client.md).

    fedscore-client keygen --out silo.key
    fedscore-client report --server URL --consortium ID --silo I --key FILE --round R --singleton X --complement Y
    fedscore-client scores --server URL --consortium ID --silo I --key FILE [--round R] [--json]

``pip install ./clients/python`` installs it (pyproject.toml); ``python3 fedscore_client_cli.py …`` runs
the same command from a copy of the folder. Answers are printed as tables for a person to read, or
as the service's JSON with ``--json``. Requests are retried on transient failures (SiloClient).

Exit codes: 0 success; 1 an error answer of the service (its code, docs/errors.md) or an answer
the client refused (FEDSCORE_CLIENT_*); 2 bad arguments, an unreadable or existing key file, or a
service that cannot be reached.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, List, Optional, Sequence

from fedscore_client import FedscoreError, SiloClient, SiloKey
from fedscore_headline import leaderboard_numbers, rank_label

PROG = "fedscore-client"


def _number(x: Any) -> str:
    return "–" if x is None else f"{x:.4f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: left-aligned first column, the others right-aligned, two spaces apart."""
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]

    def line(r: Sequence[str]) -> str:
        cells = [str(c).ljust(widths[0]) if k == 0 else str(c).rjust(widths[k]) for k, c in enumerate(r)]
        return "  ".join(cells).rstrip()

    return "\n".join([line(header), *(line(r) for r in rows)])


def _silos(scores: dict) -> List[int]:
    """Silo ids 0 … n−1, n from the longest per-silo list of the answer."""
    lists = [v for v in scores.values() if isinstance(v, list)]
    return list(range(max((len(v) for v in lists), default=0)))


def round_table(r: dict) -> str:
    """One scored round: its utilities, then per silo its two reported utilities and its scores."""
    schemes = list(r["schemes"])
    ids = _silos({"withOnly": r["withOnly"], "without": r["without"], **r["schemes"]})
    quarantined = {q["silo"] for q in r.get("quarantined", [])}
    # the silos the strategy selected (None or absent: every silo); one left out owes no report
    selected = r.get("selected")
    rows = [
        [
            f"{i}{' (quarantined)' if i in quarantined else ''}{' (not selected)' if selected is not None and i not in selected else ''}",
            _number(r["withOnly"][i]),
            _number(r["without"][i]),
            *(_number(r["schemes"][s][i]) for s in schemes),
        ]
        for i in ids
    ]
    u = r["utilities"]
    head = f"round {r['round']}: v(M) = {_number(u['full'])}, v(M0) = {_number(u['empty'])}; scored silos {', '.join(map(str, r['silos'])) or 'none'}"
    return head + "\n" + table(["silo", "v(M0+U_i)", "v(M-U_i)", *schemes], rows)


def cumulative_table(c: dict, empty_coalition: str = "initialModel") -> str:
    """Every scored round: the per-silo cumulative score of each scheme, then the headline, its 95 %
    interval (bootstrap over rounds), its share and its rank as the service's leaderboard computes
    them from the same rounds (fedscore_headline); a near-tie's rank is a range ("2–3")."""
    schemes = list(c["cumulative"])
    ids = _silos(c["cumulative"])
    board = leaderboard_numbers(c["rounds"], len(ids), empty_coalition)

    def cell(s: str, i: int) -> str:
        # The service sums 0 where a silo has no score; a silo with no score yet shows "–".
        scored = any(i < len(r["schemes"].get(s, [])) and r["schemes"][s][i] is not None for r in c["rounds"])
        return _number(c["cumulative"][s][i]) if scored else "–"

    def scored_ever(i: int) -> bool:
        return any(i in r.get("silos", []) for r in c["rounds"])

    def interval(i: int) -> str:
        lo, hi = board[i]["interval"]
        return f"[{lo:.4f}, {hi:.4f}]" if scored_ever(i) else "–"

    rows = [
        [
            str(i),
            *(cell(s, i) for s in schemes),
            _number(board[i]["headline"]) if scored_ever(i) else "–",
            interval(i),
            _number(board[i]["share"]),
            rank_label(board[i]["rankRange"]) if scored_ever(i) else "–",
        ]
        for i in ids
    ]
    rounds = [str(r["round"]) for r in c["rounds"]]
    head = (
        f"consortium {c['consortium']}: cumulative scores over {len(rounds)} scored round{'s' if len(rounds) != 1 else ''}"
        f" ({', '.join(rounds) or 'none yet'}); headline: 95 % interval by bootstrap over rounds, rank \"2–3\" a near-tie"
    )
    return head + "\n" + table(["silo", *schemes, "headline", "95 % interval", "share", "rank"], rows)


def report_line(silo: int, round: int, answer: dict) -> str:
    """What the service said of a submitted report."""
    what = "already stored (the same report was sent before)" if answer.get("duplicate") else "accepted"
    return f"silo {silo}: report for round {round} {what}; the round is in {answer.get('stage')}"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="fedscore silo client: keys, signed score reports and scores (docs/python-client.md)",
    )
    sub = p.add_subparsers(dest="command", required=True)
    k = sub.add_parser("keygen", help="write a silo key (as `fedscore keygen`) and print its public key")
    k.add_argument("--out", required=True, help="the secret key file to write (never overwritten)")
    for name, help_ in (
        ("report", "sign and submit a score report"),
        ("scores", "print the published scores (a table; --json: the service's JSON)"),
    ):
        s = sub.add_parser(name, help=help_, description=help_)
        s.add_argument("--server", required=True, help="the service's URL, e.g. http://127.0.0.1:8080")
        s.add_argument("--consortium", required=True, help="the consortium id")
        s.add_argument("--silo", required=True, type=int, help="this silo's id")
        s.add_argument("--key", required=True, help="the silo's key file")
        if name == "report":
            s.add_argument("--round", required=True, type=int, help="the round reported")
            s.add_argument("--singleton", required=True, type=float, help="v(M0 + U_i)")
            s.add_argument("--complement", required=True, type=float, help="v(M − U_i)")
        else:
            s.add_argument("--round", type=int, help="one round (default: every scored round and the cumulative scores)")
        s.add_argument("--json", action="store_true", help="print the service's answer as one JSON line")
        s.add_argument(
            "--retries", type=int, default=5, help="retries of a transient failure (connection, 429, 502-504; default 5)"
        )
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = parser().parse_args(argv)
    try:
        if a.command == "keygen":
            key = SiloKey.generate()
            key.save(a.out)
            print(key.public_key_hex)
            return 0
        client = SiloClient(a.server, a.consortium, a.silo, SiloKey.load(a.key), retries=a.retries)
        if a.command == "report":
            out = client.submit_report(a.round, a.singleton, a.complement)
            print(json.dumps(out) if a.json else report_line(a.silo, a.round, out))
        elif a.round is not None:
            out = client.round_scores(a.round)
            print(json.dumps(out) if a.json else round_table(out))
        else:
            out = client.scores()
            if a.json:
                print(json.dumps(out))
            else:
                empty = client.consortium_config().get("emptyCoalition") or "initialModel"
                print(cumulative_table(out, empty))
        return 0
    except FedscoreError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
