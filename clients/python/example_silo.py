"""One silo of a reports-only consortium, end to end (docs/networked.md, "Reports-only consortia").

    python3 example_silo.py --server URL --consortium ID --silo I --key FILE --reports FILE

`--reports` is a JSON list of this silo's utilities, one entry per round it reports:
``[{"round": 1, "singleton": 0.61, "complement": 0.74}, …]`` — in a real deployment the silo
measures them itself after each round of its FL stack (v(M0 + U_i): the round's starting model
plus its own update; v(M − U_i): the aggregate without it), as in the Flower example of the docs.
For each round it waits until the operator has opened it (posted v(M) and v(M0)), submits its
signed report, and prints one line ``reported <round> <stage>``; then it exits.
"""

import argparse
import json
import sys
import time

from fedscore_client import FedscoreError, SiloClient, SiloKey


def wait_for_round(client: SiloClient, round: int, timeout_s: float) -> dict:
    """Polls the round until it exists; its state (the operator opens it by posting its utilities)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return client.round(round)
        except FedscoreError as e:
            if e.code != "FEDSCORE_ERR_ROUND_NOT_FOUND" or time.monotonic() > deadline:
                raise
        time.sleep(0.05)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", required=True)
    p.add_argument("--consortium", required=True)
    p.add_argument("--silo", required=True, type=int)
    p.add_argument("--key", required=True)
    p.add_argument("--reports", required=True)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each round")
    a = p.parse_args()
    client = SiloClient(a.server, a.consortium, a.silo, SiloKey.load(a.key))
    with open(a.reports, encoding="utf-8") as f:
        reports = json.load(f)
    for r in reports:
        wait_for_round(client, r["round"], a.timeout)
        answer = client.submit_report(r["round"], r["singleton"], r["complement"])
        print(f"reported {r['round']} {answer['stage']}", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except FedscoreError as e:
        print(f"example_silo: {e}", file=sys.stderr)
        sys.exit(1)
