//! Magnetotellurics: transfer-function files (EDI, EMTF XML, Z-files, J-files, Zonge AVG),
//! the 1D impedance recursion, Occam 1D inversion and dimensionality indicators.
