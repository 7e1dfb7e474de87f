"""The transitions quoted in the README, with the wall and CPU time of each find_transitions call.

    python studies/transitions_table.py [--omegas 0.1,0.3,0.5] [--order 64,24]
        [--check-order 48,16] [--alpha-min 0.2] [--alpha-max 2.5] [--num 24]

Defaults are find_transitions' own (the README's `find_transitions(ModelParams(omega=w))`).
"""

from __future__ import annotations

import argparse
import time

from attnphase import GaussHermite, ModelParams, find_transitions


def _pair(text: str) -> tuple[int, int]:
    a, b = text.split(",")
    return int(a), int(b)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--omegas", default="0.1,0.3,0.5")
    ap.add_argument("--order", type=_pair, default=(64, 24))
    ap.add_argument("--check-order", type=_pair, default=(48, 16))
    ap.add_argument("--alpha-min", type=float, default=0.2)
    ap.add_argument("--alpha-max", type=float, default=2.5)
    ap.add_argument("--num", type=int, default=24)
    args = ap.parse_args()
    kw = dict(alpha_min=args.alpha_min, alpha_max=args.alpha_max, num=args.num)
    shown = dict(kw, order=args.order, check_order=args.check_order)
    print(", ".join(f"{k}={v}" for k, v in shown.items()))
    method = GaussHermite(args.order, args.check_order)
    print(
        "omega  alpha_c  alpha_c_err  alpha_l  alpha_l_err  spin_sem  spin_pos  wall_s  cpu_s"
        "  interpolated"
    )
    for omega in (float(w) for w in args.omegas.split(",")):
        t0, c0 = time.perf_counter(), time.process_time()
        t = find_transitions(ModelParams(omega=omega), method=method, **kw)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(
            f"{omega:<6g} {t.alpha_c:.4f}   {t.alpha_c_err:.4f}       {t.alpha_l:.4f}   "
            f"{t.alpha_l_err:.4f}       {t.spinodal_semantic:.4f}    {t.spinodal_positional:.4f}"
            f"    {secs:<6.0f}  {cpu:<5.0f}  {t.alpha_c_interpolated:d}{t.alpha_l_interpolated:d}",
            flush=True,
        )


if __name__ == "__main__":
    main()
