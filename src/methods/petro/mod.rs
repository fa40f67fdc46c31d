//! Petrophysics: resistivity to water content (Archie, Waxman–Smits) with Monte Carlo
//! uncertainty.
