"""Solvers: game trees as flat arrays, CFR family, best response (issue 3)."""
