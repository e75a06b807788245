"""The abstraction layer: strength levels and vira classes, the native public-tree builder, table labels and
schema, hand outcomes and payoff objectives."""
