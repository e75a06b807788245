"""The OpenSpiel layer: the rule sets as OpenSpiel games (with observers), and the numba engine as a
sampled game for MCCFR. Imports only the rules layer and the generic solvers."""
