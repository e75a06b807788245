"""The game value from an exact LP: OpenSpiel's sequence-form construction, solved by SciPy's HiGHS.

OpenSpiel's own ``sequence_form_lp`` needs cvxpy and builds a dense payoff
tensor (2 x sequences0 x sequences1): on the smallest truco variant that is
tens of GB, so the process is killed. Here OpenSpiel's ``_construct_vars``
walks the game into its sparse payoff dictionary and parent maps, and the
standard sequence-form LP (Koller, Megiddo, von Stengel) is handed to
``scipy.optimize.linprog(method="highs")``: neither the game walk nor the LP
solver is ours.
"""

import numpy as np
import pyspiel
import pytest
import scipy.sparse as sp
from open_spiel.python.algorithms import sequence_form_utils as sfu
from scipy.optimize import linprog

import truco_lab  # noqa: F401
from solvers import solve


def _sequence_form(game):
    npl = 2
    empty_is = [f"***EMPTY_INFOSET_P{p}***" for p in range(npl)]
    empty_isa = [f"***EMPTY_INFOSET_ACTION_P{p}***" for p in range(npl)]
    infosets = [{empty_is[p]: 0} for p in range(npl)]
    seqs = [{empty_isa[p]: 0} for p in range(npl)]
    action_maps = [{empty_is[p]: [empty_isa[p]]} for p in range(npl)]
    parent = [{empty_isa[p]: None} for p in range(npl)]
    children = [{empty_isa[p]: []} for p in range(npl)]
    payoff: dict = {}
    sfu._construct_vars(game.new_initial_state(), infosets, seqs, action_maps, parent, 1.0, empty_is[:],
                        empty_isa[:], payoff, children)
    n0, n1 = len(seqs[0]), len(seqs[1])
    rows, cols, vals = [], [], []
    for (k0, k1), r in payoff.items():
        rows.append(seqs[0][k0])
        cols.append(seqs[1][k1])
        vals.append(float(r[0]))
    A = sp.coo_matrix((vals, (rows, cols)), shape=(n0, n1)).tocsr()  # duplicates are summed

    def constraints(p):
        r, c, v = [0], [0], [1.0]  # the empty sequence has weight 1
        k = 1
        for info, isas in action_maps[p].items():
            if sfu.is_root(info, p):
                continue
            r.append(k)
            c.append(seqs[p][parent[p][info]])
            v.append(-1.0)
            for isa in isas:
                r.append(k)
                c.append(seqs[p][isa])
                v.append(1.0)
            k += 1
        b = np.zeros(k)
        b[0] = 1.0
        return sp.coo_matrix((v, (r, c)), shape=(k, len(seqs[p]))).tocsr(), b

    return A, constraints(0), constraints(1)


def lp_value(game) -> float:
    """max_x min_y x'Ay over sequence-form strategies, as one LP in (x, q)."""
    A, (E, e), (F, f) = _sequence_form(game)
    n0, m1 = A.shape[0], F.shape[0]
    # variables: x (n0, >= 0), q (m1, free); maximise f'q
    c = np.concatenate([np.zeros(n0), -f])
    A_ub = sp.hstack([-A.T, F.T]).tocsr()  # F'q - A'x <= 0
    b_ub = np.zeros(A.shape[1])
    A_eq = sp.hstack([E, sp.csr_matrix((E.shape[0], m1))]).tocsr()
    bounds = [(0, None)] * n0 + [(None, None)] * m1
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=e, bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return -res.fun


def test_lp_reference_reproduces_kuhn():
    assert abs(lp_value(pyspiel.load_game("kuhn_poker")) - (-1 / 18)) < 1e-9


@pytest.mark.slow
@pytest.mark.parametrize(("max_stake", "dealer"), [(3, 0), (1, 1)])
def test_native_value_matches_the_exact_lp_on_the_tiny_variant(max_stake, dealer):
    """ranks=7QJKA23, suits=c: the issue's max_stake=3 walk (517,111 nodes, ~30 s) and max_stake=1 (~4 s)."""
    g = pyspiel.load_game("truco_paulista", {"ranks": "7QJKA23", "suits": "c", "max_stake": max_stake,
                                             "dealer": dealer})
    exact = lp_value(g)
    assert abs(abs(exact) - 0.1) < 1e-9  # the tiny variant's value: the dealer wins 0.1 points per hand
    r = solve(g, algorithm="dcfr", iterations=500)
    assert r.exploitability < 1e-5
    assert abs(r.game_value - exact) <= 2 * r.exploitability + 1e-7, (r.game_value, exact)
