"""The native truco builder (vector form, level quotient, prunes) checked against the generic OpenSpiel walk."""

import itertools
from math import comb

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability as os_expl

import truco_lab  # noqa: F401  registers the games and the native builder
from solvers import solve
from solvers.api import run
from solvers.cfr import ALGORITHMS
from solvers.vector import SubgameSolver, VectorSolver
from truco_lab.abstraction.levels import deal_weights, hand_levels, vira_classes
from truco_lab.abstraction.tree import (
    ALL_PRUNES,
    CAP_OWN_RAISES,
    CAP_RAISES,
    DROP_CONCEDE,
    DROP_DOMINATED_HIDE,
    build_cell,
)
from truco_lab.rules.ruleset import PAULISTA

TINY3 = {"ranks": "7QJKA23", "suits": "c", "max_stake": 3}  # the issue's tiny variant
TINY1 = {"ranks": "7QJKA23", "suits": "c", "max_stake": 1}
TWO_SUITS = {"ranks": "KA23", "suits": "hc", "max_stake": 1}  # levels with 2 copies, 2 manilhas, 2 vira classes


def _agree(a, b) -> None:
    """Two approximate equilibria of the same game: values within their NashConv bounds."""
    tol = 2 * (a.exploitability + b.exploitability) + 1e-9
    assert abs(a.game_value - b.game_value) <= tol, (a.game_value, b.game_value, tol)


def _solve_cell(rules, score=(0, 0), dealer=0, vira=0, prunes=ALL_PRUNES, iterations=400):
    s = VectorSolver(build_cell(rules, score[0], score[1], dealer, vira, prunes), "dcfr")
    s.iterate(iterations)
    return s.game_value(), s.exploitability()


def test_full_deck_has_nine_vira_classes_with_the_right_weights():
    vcs = vira_classes(PAULISTA)
    assert len(vcs) == 9
    # viras 2 and 3 both deplete the top plain level: one class with 8 of the 40 viras
    assert sorted(round(v.weight * 40) for v in vcs) == [4] * 8 + [8]
    assert all(len(v.level_cards) == 13 for v in vcs)
    assert all(sorted(v.multiplicity) == [1] * 4 + [3] + [4] * 8 for v in vcs)


def test_deal_weights_match_brute_force_card_counting():
    rules = PAULISTA.with_deck("KA23", "hc")
    for vc in vira_classes(rules):
        t = build_cell(rules, 0, 0, 0, vc, ALL_PRUNES)
        hands = [tuple(h) for h in hand_levels(vc).hands]
        level = {c: lv for lv, cs in enumerate(vc.level_cards) for c in cs}
        cards = sorted(level)
        count = np.zeros((len(hands), len(hands)))
        for h0 in itertools.combinations(cards, 3):
            rest = [c for c in cards if c not in h0]
            for h1 in itertools.combinations(rest, 3):
                i = hands.index(tuple(sorted(level[c] for c in h0)))
                j = hands.index(tuple(sorted(level[c] for c in h1)))
                count[i, j] += 1
        n = len(cards)
        assert np.allclose(t.deal_weight, count / (comb(n, 3) * comb(n - 3, 3)))
        assert np.allclose(deal_weights(vc.multiplicity, hand_levels(vc).hands).sum(), 1.0)


@pytest.mark.slow
def test_native_and_generic_trees_give_the_same_value_on_the_tiny_variant():
    """ranks=7QJKA23, suits=c, max_stake=3: the issue's check (generic walk ~40 s)."""
    g = pyspiel.load_game("truco_paulista", {**TINY3, "dealer": 0})
    native = solve(g, algorithm="dcfr", iterations=400)
    generic = solve(g, algorithm="dcfr", iterations=300, tree="openspiel")
    assert native.native and not generic.native
    assert native.exploitability < 1e-5 and generic.exploitability < 1e-4
    _agree(native, generic)


@pytest.mark.slow
def test_native_quotient_agrees_with_generic_with_two_suits():
    """Suit isomorphism, vira classes and card removal with repeated levels (2 copies, 2 manilhas)."""
    g = pyspiel.load_game("truco_paulista", {**TWO_SUITS, "dealer": 1})
    native = solve(g, algorithm="dcfr", iterations=300)
    assert len(native.tree) == len(vira_classes(PAULISTA.with_deck("KA23", "hc")))
    generic = solve(g, algorithm="dcfr", iterations=300, tree="openspiel")
    _agree(native, generic)


@pytest.mark.slow
def test_openspiel_certifies_our_exported_policy():
    """With prunes off the native tree is the whole game: OpenSpiel's exploitability and
    value of our exported policy equal ours, and bracket the game value."""
    g = pyspiel.load_game("truco_paulista", {**TINY1, "dealer": 0})
    r = solve(g, algorithm="dcfr", iterations=60, native_options={"prunes": 0})
    pol = r.to_openspiel_policy()
    theirs = os_expl.nash_conv(g, pol) / 2
    assert abs(theirs - r.exploitability) < 1e-6
    v = expected_game_score.policy_value(g.new_initial_state(), [pol, pol])[0]
    assert abs(v - r.game_value) < 1e-6
    # the generic walk (independent of the native builder) converges to the same value
    generic = solve(g, algorithm="dcfr", iterations=300, tree="openspiel")
    _agree(r, generic)


@pytest.mark.slow
def test_exported_policy_of_a_pruned_solve_covers_the_game():
    g = pyspiel.load_game("truco_paulista", {**TINY1, "dealer": 1})
    r = solve(g, algorithm="dcfr", iterations=100)
    with pytest.warns(UserWarning, match="off the solved tree"):  # said, not silent
        pol = r.to_openspiel_policy()
    assert 0 < pol.off_tree_states < len(pol.states)
    v = expected_game_score.policy_value(g.new_initial_state(), [pol, pol])[0]
    assert abs(v - r.game_value) < 1e-5  # pruned branches are off the path of our own profile


@pytest.mark.parametrize(
    ("flag", "variant", "score"),
    [
        (DROP_CONCEDE, TINY3, (0, 0)),
        (DROP_DOMINATED_HIDE, TINY3, (0, 0)),
        (DROP_DOMINATED_HIDE, TINY3, (11, 11)),
        (DROP_DOMINATED_HIDE, {"ranks": "KA23", "suits": "hc", "max_stake": 3}, (0, 0)),
        (CAP_RAISES, {"ranks": "7QJKA23", "suits": "c", "max_stake": 6}, (9, 10)),
        (CAP_RAISES, {"ranks": "7QJKA23", "suits": "c", "max_stake": 9}, (6, 8)),
        (CAP_OWN_RAISES, {"ranks": "KA23", "suits": "hc", "max_stake": 9}, (3, 9)),
    ],
)
@pytest.mark.slow
def test_each_prune_leaves_the_game_value_unchanged(flag, variant, score):
    rules = PAULISTA.with_deck(variant["ranks"], variant["suits"]).with_max_stake(variant["max_stake"])
    vc = vira_classes(rules)[0]
    # cap_own_raises also caps every raise cap_raises does (each player's own score is at least the lower one),
    # so cap_raises is measured without it
    base = ALL_PRUNES & ~CAP_OWN_RAISES if flag == CAP_RAISES else ALL_PRUNES
    on = build_cell(rules, score[0], score[1], 0, vc, base)
    off = build_cell(rules, score[0], score[1], 0, vc, base & ~flag)
    assert on.num_slots < off.num_slots  # the prune bites here
    results = []
    for tree in (on, off):
        s = VectorSolver(tree, "dcfr")
        s.iterate(300)
        results.append((s.game_value(), s.exploitability()))
    (v1, e1), (v2, e2) = results
    assert abs(v1 - v2) <= 2 * (e1 + e2) + 1e-7, (v1, v2, e1, e2)


def test_full_deck_eleven_eleven_cell_shape():
    t = build_cell(PAULISTA, 11, 11, 0, 0)
    assert t.num_hands == 403
    assert np.isclose(t.deal_weight.sum(), 1.0)
    # raises locked: no raise, accept or fold anywhere; only card plays
    assert (t.entry_action < 80).all()
    # the public solver counts 5.6 M information sets per vira class at this tier
    assert 4_000_000 < t.num_infosets < 6_500_000


def test_vector_solver_resume_is_bit_identical(tmp_path):
    rules = PAULISTA.with_deck("7QJKA23", "c").with_max_stake(3)
    tree = build_cell(rules, 0, 0, 1, 0)
    full = VectorSolver(tree, "pcfr+")
    run(full, 40)
    ck = tmp_path / "ck.npz"
    part = VectorSolver(tree, "pcfr+")
    run(part, 15, checkpoint=ck)
    again = VectorSolver(tree, "pcfr+")
    run(again, 40, checkpoint=ck, resume=True)
    assert again.iteration == 40
    assert np.array_equal(full.regrets, again.regrets)
    assert np.array_equal(full.ssum, again.ssum)


def test_every_algorithm_converges_on_a_native_cell():
    rules = PAULISTA.with_deck("7QJKA23", "c").with_max_stake(3)
    tree = build_cell(rules, 0, 0, 0, 0)
    for alg in ALGORITHMS:
        for alternating in (True, False):
            s = VectorSolver(tree, alg, alternating=alternating)
            s.iterate(300)
            tol = 2e-2 if alg == "cfr" else 5e-3  # vanilla CFR is the slow one
            assert s.exploitability() < tol, (alg, alternating)
            assert abs(s.game_value() - 0.1) < tol


def test_bad_cells_are_named():
    with pytest.raises(ValueError, match="score0"):
        build_cell(PAULISTA, 12, 0, 0, 0)
    with pytest.raises(ValueError, match="dealer"):
        build_cell(PAULISTA, 0, 0, 2, 0)
    with pytest.raises(ValueError, match="vira class"):
        build_cell(PAULISTA, 0, 0, 0, 9)
    with pytest.raises(ValueError, match="unknown prune"):
        build_cell(PAULISTA, 11, 11, 0, 0, {"drop_everything": True})
    g = pyspiel.load_game("kuhn_poker")
    with pytest.raises(ValueError, match="native builder"):
        solve(g, tree="native")


@pytest.mark.parametrize("score", [(11, 11), (9, 10), (11, 4)])
def test_dealer_symmetry(score):
    """Swapping seats (scores and dealer) negates player 0's value (DESIGN-NOTES §2)."""
    rules = PAULISTA.with_deck("KA23", "hc").with_max_stake(6)
    vals = []
    for sc, dealer in ((score, 0), (score[::-1], 1)):
        parts = [(vc.weight, build_cell(rules, sc[0], sc[1], dealer, vc)) for vc in vira_classes(rules)]
        s = SubgameSolver(parts, "dcfr")
        s.iterate(300)
        vals.append((s.game_value(), s.exploitability()))
    (v0, e0), (v1, e1) = vals
    assert abs(v0 + v1) <= 2 * (e0 + e1) + 1e-7, (v0, v1, e0, e1)


def test_native_solve_resumes_bit_identically(tmp_path):
    """solve() on truco: every vira-class subgame's state goes into one checkpoint."""
    g = pyspiel.load_game("truco_paulista", {"ranks": "KA23", "suits": "hc", "max_stake": 3})
    ck = tmp_path / "ck.npz"
    full = solve(g, algorithm="pcfr+", iterations=30)
    solve(g, algorithm="pcfr+", iterations=12, checkpoint=ck, checkpoint_every=5)
    res = solve(g, algorithm="pcfr+", iterations=30, checkpoint=ck, resume=True)
    assert res.iterations == 30
    for a, b in zip(full.solver.solvers, res.solver.solvers, strict=True):
        assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.ssum, b.ssum)


@pytest.mark.parametrize("algorithm,threads", [("dcfr", 1), ("pcfr+", 1), ("cfr+", 1), ("pdcfr+", 1), ("dcfr", 2),
                                               ("pcfr+", 2)])
@pytest.mark.slow
def test_per_player_refresh_leaves_the_iterates_bit_identical(algorithm, threads, monkeypatch):
    """Each pass recomputes only the last-updated player's strategy and reach (on two threads: the
    subtrees below the frontier in parallel); a solver forced to recompute everything every pass
    must produce exactly the same regrets, sums and certificate."""
    import solvers.vector as V

    monkeypatch.setattr(V, "PARALLEL_SLOTS", 0)  # the parallel passes on this small tree too
    tree = build_cell(PAULISTA.with_deck("7QJKA23", "hc").with_max_stake(6), 0, 0, 0, 0)
    a = VectorSolver(tree, algorithm, threads=threads)
    b = VectorSolver(tree, algorithm, threads=threads)
    assert (a._plan() is not None) == (threads > 1)
    full = b._pass

    def every_time(who):
        b._stale = {0, 1}
        full(who)

    b._pass = every_time
    for s in (a, b):
        s.iterate(6)
    ea, eb = a.exploitability(), b.exploitability()  # a certificate in between invalidates the working state
    for s in (a, b):
        s.iterate(4)
    assert ea == eb
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.ssum, b.ssum)
    assert a.exploitability() == b.exploitability()


@pytest.mark.slow
def test_threaded_certificate_equals_the_sequential_one(monkeypatch):
    """A certificate runs player 1's best response on a helper thread; it must be bit-identical."""
    import solvers.vector as V

    s = VectorSolver(build_cell(PAULISTA.with_deck("7QJKA23", "hc").with_max_stake(6), 0, 0, 0, 0))
    s.iterate(15)
    assert s.tree.num_elements <= V.BR_THREAD_ELEMENTS
    threaded = s.best_response_values()
    monkeypatch.setattr(V, "BR_THREAD_ELEMENTS", 0)
    assert s.best_response_values() == threaded


def test_solve_on_two_threads_equals_one(monkeypatch, capsys):
    """``solve(g, threads=2)`` runs the parallel passes (forced here on a small tree) to the same
    certificate; a bad thread count is a one-line error in the API and the CLI."""
    import solvers.vector as V
    from truco_lab.cli import main

    monkeypatch.setattr(V, "PARALLEL_SLOTS", 0)
    g = pyspiel.load_game("truco_paulista", {"ranks": "KA23", "suits": "hc", "max_stake": 3})
    a = solve(g, iterations=30)
    b = solve(g, iterations=30, threads=2)
    assert all(s._plan() is not None for s in b.solver.solvers)
    assert all(s._plan() is None for s in a.solver.solvers)
    assert b.exploitability == pytest.approx(a.exploitability, abs=1e-9)
    assert b.game_value == pytest.approx(a.game_value, abs=1e-9)
    with pytest.raises(ValueError, match="threads must be a positive integer, got 0"):
        solve(g, iterations=2, threads=0)
    with pytest.raises(SystemExit) as e:
        main(["solve", "--score", "11,11", "--ranks", "KA23", "--suits", "hc", "--threads", "0", "--out", "x"])
    assert e.value.code == 2 and "--threads" in capsys.readouterr().err


def test_payoffs_live_per_outcome_and_a_temporary_payoff_is_undone():
    """A built cell keeps its utilities per outcome code (no 8-byte array per node), every terminal's
    utility is the table's entry for its code, and a best response under other payoffs leaves the
    solver's values and iterates exactly as they were."""
    rules = PAULISTA.with_deck("7QJKA23", "hc").with_max_stake(6)
    tree = build_cell(rules, 0, 0, 0, 0)
    assert tree.node_util is None and tree.payoff is not None
    u = tree.utilities()
    term = tree.node_actor < 0
    assert np.array_equal(u[term], tree.payoff[tree.node_outcome[term]]) and (u[~term] == 0).all()
    codes, table = tree.utility_codes()
    assert np.array_equal(table[codes], u)  # what the kernels read is the same float64 per node
    assert tree.nbytes() < sum(a.nbytes for a in (tree.node_actor, tree.node_list, tree.node_len,
                                                   tree.node_infoset, tree.infoset_offset, tree.infoset_nact,
                                                   tree.entry_child, tree.elem_hand, tree.deal_weight)) + 8 * tree.num_nodes
    s = VectorSolver(tree, "dcfr")
    s.iterate(30)
    before = (s.game_value(), s.exploitability(), s.regrets.copy())
    doubled = s.best_response_value(0, utilities=2 * tree.payoff)
    assert doubled == pytest.approx(2 * s.best_response_value(0))  # payoffs scale, the response with them
    assert tree.payoff is not None and np.array_equal(tree.utilities(), u)  # restored
    # both players' responses under their own payoffs in one call: the two calls' numbers, bit for bit (the
    # match's closing certificate), whether the average is read where it is kept or given in slot order
    u0, u1 = 2 * tree.payoff, tree.payoff - 0.25
    two = (s.best_response_value(0, s.average_strategy(), u0), s.best_response_value(1, s.average_strategy(), u1))
    assert s.best_response_values_under((u0, u1)) == two
    assert s.best_response_values_under((u0, u1), s.average_strategy()) == two
    assert two[0] != two[1] and np.array_equal(tree.utilities(), u)
    assert s.game_value() == before[0] and s.exploitability() == before[1]
    assert np.array_equal(s.regrets, before[2])
    with pytest.raises(ValueError, match="outcomes"):
        with tree.payoff_set(np.zeros(1)):
            pass
    assert np.array_equal(tree.utilities(), u)  # a refused payoff changes nothing


def test_each_information_set_knows_its_node_player_and_hand():
    """infoset_node and the table's labels (one numba pass each) against a plain walk: node ``n``'s information
    sets are ``node_infoset[n] + k``, one per element ``k`` of its actor's list, holding that element's hand."""
    from truco_lab.abstraction.levels import hand_levels, level_names
    from truco_lab.abstraction.tree import _token, infoset_labels
    from truco_lab.rules.cards import A_DOWN, A_RAISE

    rules = PAULISTA.with_deck("7QJKA23", "c")
    tree = build_cell(rules, 3, 5, 0, vira_classes(rules)[0])
    node = np.full(tree.num_infosets, -1)
    player = np.full(tree.num_infosets, -1)
    hand = np.full(tree.num_infosets, -1)
    for n in np.flatnonzero(tree.node_actor >= 0):
        p = tree.node_actor[n]
        for k in range(tree.node_len[n, p]):
            i = tree.node_infoset[n] + k
            node[i], player[i], hand[i] = n, p, tree.elem_hand[tree.node_list[n, p] + k]
    assert (node >= 0).all()
    assert np.array_equal(tree.infoset_node(), node)
    lab = infoset_labels(tree)
    assert np.array_equal(lab["history"][0], node) and np.array_equal(lab["player"], player)
    assert np.array_equal(lab["hand"][0], hand)
    # face-down cards and public histories (numba passes) against walks up the element and node links
    names = level_names(rules, tree.source.vira_class)
    card_level = hand_levels(tree.source.vira_class).card_level
    owner = np.repeat(np.arange(tree.num_infosets), tree.infoset_nact)
    hid_codes, hid_names = lab["hidden"]
    hist_codes, histories = lab["history"]
    strings = histories[np.arange(tree.num_nodes)]
    for i in range(0, tree.num_infosets, 7):
        e, down = tree.node_list[node[i], player[i]] + i - tree.node_infoset[node[i]], []
        while tree.elem_entry[e] >= 0:
            slot = tree.elem_entry[e]
            if A_DOWN <= tree.entry_action[slot] < A_RAISE:
                down.append(names[card_level[tree.entry_action[slot] - A_DOWN]])
            j = owner[slot]
            e = tree.node_list[node[j], player[j]] + j - tree.node_infoset[node[j]]
        assert hid_names[hid_codes[i]] == " ".join(reversed(down))
        path, n = [], node[i]
        while n > 0:
            par = tree.node_parent[n]
            path.append(f"{tree.node_actor[par]}:{_token(int(tree.node_action[n]), names, card_level, rules.raise_targets)}")
            n = par
        assert strings[hist_codes[i]] == ", ".join(reversed(path))
    assert (hid_codes > 0).any() and max(len(h) for h in strings) > 40  # face-down plays and long histories


def test_labels_of_the_sets_a_table_keeps_are_the_full_labels_at_those_sets():
    """``min_actions`` labels only the sets of that many actions (what a table writes), in number order: the
    same codes and names as labelling every set, gathered at them; the action notation is the per-slot one's."""
    from truco_lab.abstraction.tree import infoset_labels, table_labels

    rules = PAULISTA.with_deck("7QJKA23", "c")
    tree = build_cell(rules, 3, 5, 0, vira_classes(rules)[0])
    full = infoset_labels(tree)
    for m in (1, 2, 3):
        sets = np.flatnonzero(tree.infoset_nact >= m)
        part = infoset_labels(tree, min_actions=m)
        assert part["min_actions"] == m and len(part["player"]) == len(sets) > 0
        assert np.array_equal(part["player"], full["player"][sets])
        for k in ("hand", "hidden"):  # the same names per set (the hidden categories may be numbered anew)
            assert np.array_equal(np.asarray(part[k][1])[part[k][0]], np.asarray(full[k][1])[full[k][0][sets]]), k
        assert np.array_equal(part["history"][0], full["history"][0][sets])  # node numbers: the same histories
    tree.index.labels = None
    slots = table_labels(tree)["action"]
    codes, names = table_labels(tree, min_actions=2)["action_names"]
    assert table_labels(tree, min_actions=2)["min_actions"] == 2
    by_code = dict(zip(codes.tolist(), names.tolist(), strict=True))
    assert [by_code[int(c)] for c in tree.entry_action] == slots[1][slots[0]].tolist()
