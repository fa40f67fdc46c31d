//! Time-domain electromagnetics: sounding files, the 1D layered-earth forward model
//! (Hankel and sine/cosine digital filters), Occam and few-layer inversions.
