//! The built-in demo: a [`Source`] over a `gpumeter-sim` scenario, advancing with a [`Clock`].
