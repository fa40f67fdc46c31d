//! Gravity and magnetics: station tables, regional/residual separation, gridding, prism
//! forward models, and the 3D linear inversion.

pub mod prism;
