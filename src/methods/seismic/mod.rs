//! Seismic refraction: travel-time files and raw gathers (SEG-2, SEG-Y), first-break
//! picking, shortest-path forward modelling, travel-time tomography and interfaces.

pub mod data;
pub mod sgt;

pub use data::{Topography, TravelTimes};
pub mod evaluate;
pub mod forward;
pub mod gather;
pub mod grid;
pub mod interfaces;
pub mod inversion;
pub mod picking;
pub mod seg2;
pub mod segy;
pub mod tables;
