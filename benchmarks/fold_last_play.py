"""What folding the last forced play would buy (prints figures, never asserts): a prototype of the structural
change earlier stops named for issue 18 §1.

A decision node whose block is all forced (each hand's last card) and whose children are all one-against-one
terminals is folded into one *showdown* node: its children's outcome and deal-weight codes in three compact
arrays, the values written straight to the actor's elements at the node. The tree is folded after it is built
(the prototype renumbers the node arrays; the elements stay), and the one-thread backward pass of
``solvers.blocks`` is generated with a showdown branch from its own source, so everything else is today's
arithmetic. It checks that regrets and strategy sums come out bit for bit the same, then times both passes
alternately from the same state.

    python benchmarks/fold_last_play.py 10,10 20     # cell, iterations before timing (vira class 0, dealer 0)
"""

import inspect
import sys
import textwrap
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and benchmarks/solvers.py would shadow the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numba as nb  # noqa: E402
import numpy as np  # noqa: E402

from solvers import blocks as B  # noqa: E402
from solvers.vector import _RULE_ID, VectorSolver, _discounts  # noqa: E402
from truco_lab.lab.cell import CellSpec  # noqa: E402
from truco_lab.rules import PAULISTA  # noqa: E402

a, b = map(int, (sys.argv[1] if len(sys.argv) > 1 else "10,10").split(","))
spec = CellSpec.make(PAULISTA, a, b, 0, 0)
tree = spec.build()
s = VectorSolver(tree, "dcfr+", threads=1)
s.iterate(int(sys.argv[2]) if len(sys.argv) > 2 else 20)
lay = s._layout()
t = tree
actor = t.node_actor
ucode, uvals = t.utility_codes()
pcode, wvals = lay.pairs


@nb.njit
def find(actor, blo, bhi, parent, nchild0, nnchild, nlen, nlist, out):
    cnt = 0
    for n in range(actor.shape[0]):
        p = actor[n]
        if p < 0 or bhi[n] <= blo[n] or nlen[n, 1 - p] != 1:
            continue
        ok = True
        for d in range(blo[n], bhi[n]):
            if parent[d] >= 0:
                ok = False
                break
        if not ok:
            continue
        c0 = nchild0[n]
        for c in range(c0, c0 + nnchild[n]):
            if actor[c] >= 0 or nlen[c, 0] != 1 or nlen[c, 1] != 1:
                ok = False
                break
        if ok:
            out[n] = True
            cnt += 1
    return cnt


isC = np.zeros(t.num_nodes, np.bool_)
nC = find(actor, lay.block_lo, lay.block_hi, lay.parent, t.node_child, t.node_nchild, t.node_len, t.node_list, isC)
Cn = np.flatnonzero(isC)
kids = np.concatenate([np.arange(t.node_child[n], t.node_child[n] + t.node_nchild[n]) for n in Cn]) if nC else np.zeros(0, int)
keep = np.ones(t.num_nodes, np.bool_)
keep[kids] = False
print(f"{a}x{b}: nodes {t.num_nodes:,}, folded decision nodes {nC:,}, terminals removed {len(kids):,}")
new = np.cumsum(keep) - 1
A2 = actor[keep].copy()
U2 = ucode[keep].copy()
NL2 = np.ascontiguousarray(t.node_list[keep])
NN2 = np.ascontiguousarray(lay.node_len[keep])
BL2 = lay.block_lo[keep].copy()
BH2 = lay.block_hi[keep].copy()
CB2 = lay.choice_base[keep].copy()
PC2 = pcode[keep].copy()
# showdown arrays, children in node order per folded node
sd_e, sd_u, sd_w = [], [], []
pos = 0
for n in Cn:
    c0, k = t.node_child[n], t.node_nchild[n]
    p = actor[n]
    m = new[n]
    A2[m] = 2 + p
    BL2[m] = pos
    for c in range(c0, c0 + k):
        d = t.node_list[c, p]
        sd_e.append(~lay.parent[d])
        sd_u.append(ucode[c])
        sd_w.append(pcode[c])
        pos += 1
    BH2[m] = pos
sd_e = np.array(sd_e, np.int32)
sd_u = np.array(sd_u, ucode.dtype)
sd_w = np.array(sd_w, pcode.dtype)
old_b = sum(x.nbytes for x in (actor, ucode, t.node_list, lay.node_len, lay.block_lo, lay.block_hi, lay.choice_base, pcode))
new_b = sum(x.nbytes for x in (A2, U2, NL2, NN2, BL2, BH2, CB2, PC2, sd_e, sd_u, sd_w))
print(f"node arrays the backward pass reads: {old_b / 1e6:.0f} MB -> {new_b / 1e6:.0f} MB")

src = textwrap.dedent(inspect.getsource(B._block_body.py_func))
src = src.replace("@nb.njit(cache=True, inline=\"always\")\n", "")
src = src.replace("def _block_body(", "def _fold_body(sd_e, sd_u, sd_w, ")
hook = "        p = actor[n]\n"
show = '''        p = actor[n]
        if p >= 2:  # a folded last play: the actor's elements against the opponent's one
            q = p - 2
            so = nlist[n, 1 - q]
            ro = reach[so]
            for z in range(bhi[n] - 1, blo[n] - 1, -1):
                u = uvals[sd_u[z]]
                if u == 0.0:
                    continue
                e = sd_e[z]
                w = wvals[sd_w[z]]
                if q == 0:
                    if want0:
                        value[e] += u * (w * ro)
                    if want1:
                        value[so] -= u * (w * reach[e])
                else:
                    if want0:
                        value[so] += u * (w * reach[e])
                    if want1:
                        value[e] -= u * (w * ro)
            continue
'''
assert hook in src
src = src.replace(hook, show, 1)
ns = dict(B.__dict__)
exec(src, ns)
fold_body = nb.njit(ns["_fold_body"])
ns["_fold_body"] = fold_body
exec('''
def fold_backward(sd_e, sd_u, sd_w, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat, reach,
                  value, mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred, max_list):
    value[:] = 0.0
    tb = np.zeros(1)
    vi = np.empty(max_list)
    cnt = np.empty(max_list, np.int32)
    nz = np.empty(max_list, np.int64)
    _fold_body(sd_e, sd_u, sd_w, 0, actor.shape[0], -1, -1, 0, 0, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase,
               ehand, weights, pairs, strat, reach, value, mode, who, 6, t, (pos, neg, sdisc), regrets, ssum, pred,
               (vi, cnt, nz))
''', ns)
fold_backward = nb.njit(ns["fold_backward"])


def timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def args_old(who):
    it = float(s.iteration)
    pos, neg, sd = _discounts(it, s.alpha, s.beta, s.gamma, s.scheduled)
    return (actor, (ucode, uvals), t.node_list, lay.node_len, lay.block_lo, lay.block_hi, lay.parent, lay.choice_base,
            t.elem_hand, lay.weights(t), lay.pairs, s._strat, s._reach, s._value, B.MODE_UPDATE, who, _RULE_ID["dcfr+"],
            it, pos, neg, sd, s._r, s._s, s._p, lay.max_list)


def args_new(who):
    o = list(args_old(who))
    o[0], o[1], o[2], o[3], o[4], o[5], o[7] = A2, (U2, uvals), NL2, NN2, BL2, BH2, CB2
    o[10] = (PC2, wvals)
    return (sd_e, sd_u, sd_w, *o)


for who in (0, 1):
    s._refresh(who)
    st = [x.copy() for x in (s._r, s._s, s._p)]
    B.block_backward(*args_old(who))
    r_old, s_old, v_old = s._r.copy(), s._s.copy(), s._value.copy()
    s._r[:], s._s[:], s._p[:] = st
    fold_backward(*args_new(who))
    # folded children's own elements keep no value (their values were passed to the parent's elements)
    forced_kids = t.node_list[kids, actor[t.node_parent[kids]]]
    mask = np.ones(v_old.shape[0], np.bool_)
    mask[forced_kids] = False
    print(f"player {who}: regrets equal {np.array_equal(r_old, s._r)}, max diff {np.max(np.abs(r_old - s._r)):.3g}; "
          f"sums equal {np.array_equal(s_old, s._s)}; values (other elements) max diff "
          f"{np.max(np.abs(v_old[mask] - s._value[mask])):.3g}")
    s._r[:], s._s[:], s._p[:] = st
    to, tn = [], []
    for _ in range(5):
        to.append(timed(lambda w=who: B.block_backward(*args_old(w))))
        s._r[:], s._s[:], s._p[:] = st
        tn.append(timed(lambda w=who: fold_backward(*args_new(w))))
        s._r[:], s._s[:], s._p[:] = st
    print(f"player {who}: backward pass, one thread: today {min(to):.3f} s (median {np.median(to):.3f}), "
          f"folded {min(tn):.3f} s (median {np.median(tn):.3f}); ratio of minima {min(tn) / min(to):.3f}")

tr = [timed(lambda: s._refresh(0)) for _ in range(5)]
print(f"refresh of one player, one thread: {min(tr):.3f} s (median {np.median(tr):.3f})")
fe = sum(int(lay.block_hi[n] - lay.block_lo[n]) for n in Cn[:]) if nC else 0
print(f"folded nodes' forced block elements: {fe:,} of {t.num_elements:,} elements; decision nodes with a block: "
      f"{int(((actor >= 0) & (lay.block_hi > lay.block_lo)).sum()):,}")
kinds = {"terminals kept": int(((A2 < 0)).sum()), "1v1 terminals kept": int(((A2 < 0) & (NN2[:, 0] == 1) & (NN2[:, 1] == 1)).sum()),
         "decision kept": int(((A2 >= 0) & (A2 < 2)).sum())}
print(kinds)
