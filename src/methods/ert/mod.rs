//! Electrical resistivity tomography: readers for instrument formats, quality control,
//! the 2.5D finite-element forward model and its Jacobian, inversion (single and
//! time-lapse).
