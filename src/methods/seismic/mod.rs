//! Seismic refraction: travel-time files and raw gathers (SEG-2, SEG-Y), first-break
//! picking, shortest-path forward modelling, travel-time tomography and interfaces.
